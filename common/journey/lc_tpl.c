/* lc_tpl.c — ${…} templates: the compiler to a list of parts, and the renderer. */
#include "lc_tpl.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_rng.h"
#include "lc_tpl_stage.h"

enum part_kind {
    PART_LITERAL,
    PART_VAR,
    PART_USER_ID,
    PART_ITERATION,
    PART_NOW_MS,
    PART_UUID,
    PART_RAND,
};

typedef struct part_s {
    uint8_t kind;      /* enum part_kind */
    uint8_t n_filters;
    uint8_t filters[LC_TPL_FILTERS_MAX]; /* enum lc_tpl_filter, applied in this order */
    uint32_t off, len; /* literal: its bytes (escaped for the mode) in text; var: its name in names */
    int slot;          /* var */
    int64_t lo, hi;    /* rand, lo <= hi */
} part_t;

struct lc_tpl_s {
    char *source; /* NUL-terminated copy */
    char *text;   /* the literal parts' bytes */
    char *names;  /* the variables' names, each NUL-terminated */
    part_t *parts;
    size_t n_parts;
    int *uses; /* distinct slots, in order of first use */
    size_t n_uses;
    lc_tpl_mode_t mode;
};

/* Compilation -------------------------------------------------------------------------------- */

typedef struct compiler_s {
    lc_tpl_t *t;
    const char *src;
    size_t len;
    const lc_tpl_names_t *names;
    lc_buf_t text, name_text;
    size_t literal_start; /* where in text the literal run not yet made a part begins */
    size_t parts_cap;
    char *errmsg;
    size_t errlen;
} compiler_t;

/* An error about the expression whose "${" is at open and whose "}" is at close. */
static int expression_errf(compiler_t *c, size_t open, size_t close, int code, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));
static int expression_errf(compiler_t *c, size_t open, size_t close, int code, const char *fmt,
                           ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t body = close - open - 2, shown = body < 64 ? body : 64;
    return lc_errf(c->errmsg, c->errlen, code, "${%.*s%s}: %s", (int)shown, c->src + open + 2,
                   shown < body ? "..." : "", what);
}

static int add_part(compiler_t *c, const part_t *p)
{
    lc_tpl_t *t = c->t;
    if (t->n_parts == LC_TPL_PARTS_MAX)
        return lc_errf(c->errmsg, c->errlen, LC_ETOOBIG, "more than %d parts (literal runs and "
                       "${...} expressions)", LC_TPL_PARTS_MAX);
    if (t->n_parts == c->parts_cap) {
        size_t cap = c->parts_cap ? c->parts_cap * 2 : 4;
        part_t *parts = realloc(t->parts, cap * sizeof *parts);
        if (parts == NULL)
            return LC_ENOMEM;
        t->parts = parts;
        c->parts_cap = cap;
    }
    t->parts[t->n_parts++] = *p;
    return 0;
}

/* Appends literal bytes, escaped for the mode, to the pending literal run. */
static int add_literal(compiler_t *c, const char *s, size_t n)
{
    const lc_tpl_stage_t *escape = lc_tpl_escaper(c->t->mode);
    if (n == 0)
        return 0; /* nor allocate text for a template without literals */
    if (escape == NULL)
        return lc_buf_append(&c->text, s, n);
    if (lc_buf_reserve(&c->text, escape->bound(n)) != 0)
        return LC_ENOMEM;
    uint8_t type = LC_V_STRING;
    c->text.len += escape->write(s, n, &type, c->text.data + c->text.len);
    c->text.data[c->text.len] = '\0';
    return 0;
}

/* Makes the pending literal run a part, when it holds anything. */
static int end_literal(compiler_t *c)
{
    size_t n = c->text.len - c->literal_start;
    if (n == 0)
        return 0;
    if (c->text.len > UINT32_MAX)
        return lc_errf(c->errmsg, c->errlen, LC_ETOOBIG, "template too long once escaped");
    part_t p = {.kind = PART_LITERAL, .off = (uint32_t)c->literal_start, .len = (uint32_t)n};
    c->literal_start = c->text.len;
    return add_part(c, &p);
}

static bool word_start(char ch)
{
    return ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

static size_t word_len(const char *s, size_t n)
{
    if (n == 0 || !word_start(s[0]))
        return 0;
    size_t i = 1;
    while (i < n && (word_start(s[i]) || (s[i] >= '0' && s[i] <= '9')))
        i++;
    return i;
}

static void skip_spaces(const char *s, size_t *pos, size_t end)
{
    while (*pos < end && (s[*pos] == ' ' || s[*pos] == '\t'))
        (*pos)++;
}

/* Parses a decimal int64 (optional sign, at least one digit) at s[*pos..end); *pos moves past
 * it only when it is one. */
static bool parse_int64(const char *s, size_t *pos, size_t end, int64_t *out)
{
    size_t i = *pos;
    bool negative = i < end && s[i] == '-';
    if (i < end && (s[i] == '-' || s[i] == '+'))
        i++;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    size_t first_digit = i;
    for (; i < end && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (i == first_digit)
        return false;
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    *pos = i;
    return true;
}

/* Parses "(a,b)" after "rand" at *pos (spaces allowed) into p. */
static int parse_rand_args(compiler_t *c, size_t open, size_t close, size_t *pos, part_t *p)
{
    const char *s = c->src;
    bool ok = *pos < close && s[*pos] == '(';
    if (ok) {
        (*pos)++;
        skip_spaces(s, pos, close);
        ok = parse_int64(s, pos, close, &p->lo);
    }
    skip_spaces(s, pos, close);
    if (ok && (ok = *pos < close && s[*pos] == ',')) {
        (*pos)++;
        skip_spaces(s, pos, close);
        ok = parse_int64(s, pos, close, &p->hi);
    }
    skip_spaces(s, pos, close);
    if (!ok || *pos >= close || s[*pos] != ')')
        return expression_errf(c, open, close, LC_EINVAL,
                               "rand takes two integers, rand(a,b), at offset %zu", *pos);
    (*pos)++;
    if (p->lo > p->hi)
        return expression_errf(c, open, close, LC_EINVAL, "rand(a,b) needs a <= b");
    p->kind = PART_RAND;
    return 0;
}

/* Classifies the name at *pos (n bytes) as a built-in, or as a variable that resolve_var will
 * look up once the whole expression has parsed. */
static int classify_name(compiler_t *c, size_t open, size_t close, size_t *pos, size_t n,
                         part_t *p)
{
    static const struct {
        const char *name;
        enum part_kind kind;
    } builtins[] = {{"user_id", PART_USER_ID},
                    {"iteration", PART_ITERATION},
                    {"now_ms", PART_NOW_MS},
                    {"uuid", PART_UUID}};
    const char *name = c->src + *pos;
    *pos += n;
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        if (strlen(builtins[i].name) == n && memcmp(builtins[i].name, name, n) == 0) {
            p->kind = (uint8_t)builtins[i].kind;
            return 0;
        }
    }
    if (n == 4 && memcmp(name, "rand", 4) == 0) {
        skip_spaces(c->src, pos, close);
        return parse_rand_args(c, open, close, pos, p);
    }
    p->kind = PART_VAR;
    return 0;
}

/* Resolves the variable name c->src[at..at+n) into p, keeping a copy of the name. */
static int resolve_var(compiler_t *c, size_t at, size_t n, part_t *p)
{
    const char *name = c->src + at;
    int slot = c->names != NULL ? c->names->resolve(c->names->ctx, name, n) : -1;
    if (slot < 0)
        return lc_errf(c->errmsg, c->errlen, LC_EINVAL, "unknown variable ${%.*s}", (int)n, name);
    p->slot = slot;
    p->off = (uint32_t)c->name_text.len;
    p->len = (uint32_t)n;
    if (lc_buf_append(&c->name_text, name, n) != 0 || lc_buf_append(&c->name_text, "", 1) != 0)
        return LC_ENOMEM;
    return 0;
}

/* How a byte the parser did not expect reads in a message. */
static const char *shown_byte(unsigned char ch, char buf[8])
{
    if (ch >= 0x21 && ch < 0x7f)
        snprintf(buf, 8, "'%c'", ch);
    else
        snprintf(buf, 8, "0x%02x", ch);
    return buf;
}

/* Parses the filters after the name, ('|' filter)*, up to close. */
static int parse_filters(compiler_t *c, size_t open, size_t close, size_t *pos, part_t *p)
{
    const char *s = c->src;
    char shown[8];
    for (skip_spaces(s, pos, close); *pos < close; skip_spaces(s, pos, close)) {
        if (s[*pos] != '|')
            return expression_errf(c, open, close, LC_EINVAL, "unexpected %s at offset %zu",
                                   shown_byte((unsigned char)s[*pos], shown), *pos);
        (*pos)++;
        skip_spaces(s, pos, close);
        size_t start = *pos;
        *pos += word_len(s + start, close - start);
        uint8_t id;
        if (*pos == start)
            return expression_errf(c, open, close, LC_EINVAL,
                                   "expected a filter name at offset %zu", start);
        if (lc_tpl_filter_find(s + start, *pos - start, &id) == NULL)
            return expression_errf(c, open, close, LC_EINVAL, "unknown filter %.*s",
                                   (int)(*pos - start), s + start);
        if (p->n_filters == LC_TPL_FILTERS_MAX)
            return expression_errf(c, open, close, LC_ETOOBIG, "more than %d filters",
                                   LC_TPL_FILTERS_MAX);
        p->filters[p->n_filters++] = id;
    }
    return 0;
}

static int add_use(compiler_t *c, int slot)
{
    lc_tpl_t *t = c->t;
    for (size_t i = 0; i < t->n_uses; i++)
        if (t->uses[i] == slot)
            return 0;
    int *uses = realloc(t->uses, (t->n_uses + 1) * sizeof *uses); /* compile time, few uses */
    if (uses == NULL)
        return LC_ENOMEM;
    t->uses = uses;
    t->uses[t->n_uses++] = slot;
    return 0;
}

/* Compiles the expression whose "${" is at open and whose "}" is at close into a part. */
static int compile_expression(compiler_t *c, size_t open, size_t close)
{
    size_t pos = open + 2;
    skip_spaces(c->src, &pos, close);
    if (pos == close)
        return lc_errf(c->errmsg, c->errlen, LC_EINVAL, "empty ${} at offset %zu", open);
    size_t n = lc_tpl_name_len(c->src + pos, close - pos);
    if (n == 0)
        return expression_errf(c, open, close, LC_EINVAL, "expected a name at offset %zu", pos);
    if (n > LC_TPL_NAME_MAX)
        return expression_errf(c, open, close, LC_ETOOBIG, "name longer than %d characters",
                               LC_TPL_NAME_MAX);
    part_t p = {0};
    size_t name_at = pos;
    int rv = classify_name(c, open, close, &pos, n, &p);
    if (rv == 0)
        rv = parse_filters(c, open, close, &pos, &p);
    if (rv == 0 && p.kind == PART_VAR)
        rv = resolve_var(c, name_at, n, &p);
    if (rv == 0)
        rv = end_literal(c);
    if (rv == 0)
        rv = add_part(c, &p);
    if (rv == 0 && p.kind == PART_VAR)
        rv = add_use(c, p.slot);
    return rv;
}

/* Compiles c->src: literal runs, "$$" pairs before a '{', and ${…} expressions. */
static int compile_parts(compiler_t *c)
{
    const char *s = c->src;
    size_t pos = 0, run = 0; /* run: where the literal bytes not yet added begin */
    int rv = 0;
    while (rv == 0 && pos < c->len) {
        const char *dollar = memchr(s + pos, '$', c->len - pos);
        if (dollar == NULL)
            break;
        size_t first = (size_t)(dollar - s), brace = first;
        while (brace < c->len && s[brace] == '$')
            brace++;
        pos = brace;
        if (brace == c->len || s[brace] != '{')
            continue; /* dollars before anything but '{' are literal as they stand */
        size_t dollars = brace - first;
        rv = add_literal(c, s + run, first - run);
        if (rv == 0)
            rv = add_literal(c, s + first, dollars / 2);
        run = brace; /* after an even number of dollars the '{' is literal */
        if (rv != 0 || dollars % 2 == 0)
            continue;
        const char *close = memchr(s + brace, '}', c->len - brace);
        if (close == NULL)
            return lc_errf(c->errmsg, c->errlen, LC_EINVAL, "unterminated ${ at offset %zu",
                           brace - 1);
        rv = compile_expression(c, brace - 1, (size_t)(close - s));
        run = pos = (size_t)(close - s) + 1;
    }
    if (rv == 0)
        rv = add_literal(c, s + run, c->len - run);
    return rv == 0 ? end_literal(c) : rv;
}

/* b's bytes in an allocation of their size: the buffer grew by doubling, and t lives long. */
static char *fitted(lc_buf_t *b)
{
    char *data = b->data != NULL ? realloc(b->data, b->len + 1) : NULL;
    return data != NULL ? data : b->data;
}

int lc_tpl_compile(lc_tpl_t **out, const char *src, size_t len, lc_tpl_mode_t mode,
                   const lc_tpl_names_t *names, char *errmsg, size_t errlen)
{
    assert(out != NULL && (src != NULL || len == 0));
    assert(mode == LC_TPL_RAW || mode == LC_TPL_JSON_STR || mode == LC_TPL_FORM);
    *out = NULL;
    if (len > LC_TPL_SOURCE_MAX)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "template longer than %d bytes",
                       LC_TPL_SOURCE_MAX);
    lc_tpl_t *t = calloc(1, sizeof *t);
    char *source = malloc(len + 1);
    int rv = LC_ENOMEM;
    if (t != NULL && source != NULL) {
        if (len > 0)
            memcpy(source, src, len);
        source[len] = '\0';
        t->source = source;
        t->mode = mode;
        compiler_t c = {.t = t, .src = source, .len = len, .names = names,
                        .errmsg = errmsg, .errlen = errlen};
        rv = compile_parts(&c);
        t->text = fitted(&c.text); /* t owns them now, whatever rv is */
        t->names = fitted(&c.name_text);
    } else {
        free(source);
    }
    if (rv == 0) {
        *out = t;
        return 0;
    }
    lc_tpl_free(t);
    return rv == LC_ENOMEM ? lc_errf(errmsg, errlen, rv, "out of memory") : rv;
}

void lc_tpl_free(lc_tpl_t *t)
{
    if (t == NULL)
        return;
    free(t->source);
    free(t->text);
    free(t->names);
    free(t->parts);
    free(t->uses);
    free(t);
}

/* Rendering ---------------------------------------------------------------------------------- */

#define BUILTIN_MAX 40 /* the longest built-in value: a UUID's 36 characters */

static size_t write_i64(char *dst, int64_t v)
{
    if (v >= 0)
        return lc_tpl_write_u64(dst, (uint64_t)v);
    dst[0] = '-';
    return 1 + lc_tpl_write_u64(dst + 1, 0 - (uint64_t)v); /* unsigned: INT64_MIN negates safely */
}

/* A random version 4 UUID (RFC 4122 variant), lowercase: 36 bytes. */
static size_t write_uuid(char *dst, uint64_t *rng)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t hi = lc_rng_next(rng), lo = lc_rng_next(rng);
    hi = (hi & ~0xF000ULL) | 0x4000ULL;
    lo = (lo & ~(3ULL << 62)) | (2ULL << 62);
    size_t n = 0;
    for (int i = 0; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20)
            dst[n++] = '-';
        uint64_t word = i < 16 ? hi : lo;
        dst[n++] = hex[(word >> (60 - 4 * (i % 16))) & 0xF];
    }
    return n;
}

static int64_t draw_rand(const part_t *p, uint64_t *rng)
{
    /* Unsigned arithmetic keeps the whole int64 range safe; a full span takes any draw. */
    uint64_t span = (uint64_t)p->hi - (uint64_t)p->lo;
    uint64_t off = span == UINT64_MAX ? lc_rng_next(rng) : lc_rng_below(rng, span + 1);
    return (int64_t)((uint64_t)p->lo + off);
}

/* The value of expression p before its filters: a variable's from env, a built-in's written
 * into scratch (BUILTIN_MAX bytes). */
static int expression_input(const lc_tpl_t *t, const part_t *p, const lc_tpl_env_t *env,
                            char *scratch, lc_value_t *v)
{
    v->data = scratch;
    v->type = LC_V_NUMBER;
    switch (p->kind) {
    case PART_VAR:
        assert(env->get != NULL);
        if (env->get(env->ctx, p->slot, v))
            return 0;
        if (env->missing != NULL)
            *env->missing = t->names + p->off;
        return LC_ENOTFOUND;
    case PART_USER_ID:
        v->len = lc_tpl_write_u64(scratch, env->user_id);
        return 0;
    case PART_ITERATION:
        v->len = lc_tpl_write_u64(scratch, env->iteration);
        return 0;
    case PART_NOW_MS:
        v->len = lc_tpl_write_u64(scratch, env->now_ms);
        return 0;
    case PART_RAND:
        assert(env->rng != NULL);
        v->len = write_i64(scratch, draw_rand(p, env->rng));
        return 0;
    case PART_UUID:
        assert(env->rng != NULL);
        v->type = LC_V_STRING;
        v->len = write_uuid(scratch, env->rng);
        return 0;
    }
    assert(!"a part kind compile_expression never makes");
    return LC_EINVAL;
}

/* The i-th transform of p's value: its filters in order, then the mode's escaping. */
static const lc_tpl_stage_t *part_stage(const lc_tpl_t *t, const part_t *p, size_t i)
{
    return i < p->n_filters ? lc_tpl_filter(p->filters[i]) : lc_tpl_escaper(t->mode);
}

static size_t part_stages(const lc_tpl_t *t, const part_t *p)
{
    return p->n_filters + (lc_tpl_escaper(t->mode) != NULL ? 1u : 0u);
}

static size_t add_saturated(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* The room value_write needs for an n-byte value of p: each later stage writes its output
 * after its input, then moves it down. */
static size_t value_room(const lc_tpl_t *t, const part_t *p, size_t n)
{
    size_t stages = part_stages(t, p), room = n;
    for (size_t i = 0; i < stages; i++) {
        size_t next = part_stage(t, p, i)->bound(n);
        size_t need = i == 0 ? next : add_saturated(n, next);
        room = need > room ? need : room;
        n = next;
    }
    return room;
}

/* Writes v through p's stages into dst (value_room bytes, not overlapping v); returns the
 * length written. OUT: *type, the type of the result. */
static size_t value_write(const lc_tpl_t *t, const part_t *p, lc_value_t v, char *dst,
                          uint8_t *type)
{
    size_t stages = part_stages(t, p), n;
    *type = v.type;
    if (stages == 0) {
        if (v.len > 0)
            memcpy(dst, v.data, v.len);
        return v.len;
    }
    n = part_stage(t, p, 0)->write(v.data, v.len, type, dst);
    for (size_t i = 1; i < stages; i++) {
        size_t w = part_stage(t, p, i)->write(dst, n, type, dst + n);
        memmove(dst, dst + n, w);
        n = w;
    }
    return n;
}

static int render_expression(const lc_tpl_t *t, const part_t *p, const lc_tpl_env_t *env,
                             lc_buf_t *out)
{
    char scratch[BUILTIN_MAX];
    lc_value_t v;
    int rv = expression_input(t, p, env, scratch, &v);
    if (rv != 0)
        return rv;
    if (lc_buf_reserve(out, value_room(t, p, v.len)) != 0)
        return LC_ENOMEM;
    uint8_t type;
    out->len += value_write(t, p, v, out->data + out->len, &type);
    out->data[out->len] = '\0';
    return 0;
}

int lc_tpl_render(const lc_tpl_t *t, const lc_tpl_env_t *env, lc_buf_t *out)
{
    assert(t != NULL && env != NULL && out != NULL);
    size_t start = out->len;
    for (size_t i = 0; i < t->n_parts; i++) {
        const part_t *p = &t->parts[i];
        int rv = p->kind == PART_LITERAL ? lc_buf_append(out, t->text + p->off, p->len)
                                         : render_expression(t, p, env, out);
        if (rv != 0) {
            out->len = start;
            if (out->data != NULL)
                out->data[start] = '\0';
            return rv;
        }
    }
    return 0;
}

int lc_tpl_value(const lc_tpl_t *t, const lc_tpl_env_t *env, char *scratch, size_t cap,
                 lc_buf_t *spill, lc_value_t *value)
{
    assert(lc_tpl_is_expression(t) && env != NULL && spill != NULL && value != NULL);
    const part_t *p = &t->parts[0];
    char input[BUILTIN_MAX];
    lc_value_t v;
    int rv = expression_input(t, p, env, input, &v);
    if (rv != 0)
        return rv;
    if (p->kind == PART_VAR && part_stages(t, p) == 0) {
        *value = v;
        return 0;
    }
    size_t room = value_room(t, p, v.len);
    char *dst = scratch;
    if (room > cap) {
        if (lc_buf_reserve(spill, room) != 0)
            return LC_ENOMEM;
        dst = spill->data + spill->len;
    }
    value->len = value_write(t, p, v, dst, &value->type);
    value->data = dst;
    return 0;
}

/* Questions about a compiled template ---------------------------------------------------------- */

const char *lc_tpl_source(const lc_tpl_t *t)
{
    assert(t != NULL);
    return t->source;
}

bool lc_tpl_repeatable(const lc_tpl_t *t)
{
    assert(t != NULL);
    for (size_t i = 0; i < t->n_parts; i++) {
        uint8_t k = t->parts[i].kind;
        if (k == PART_NOW_MS || k == PART_UUID || k == PART_RAND)
            return false;
    }
    return true;
}

bool lc_tpl_dynamic(const lc_tpl_t *t)
{
    assert(t != NULL);
    for (size_t i = 0; i < t->n_parts; i++)
        if (t->parts[i].kind != PART_LITERAL)
            return true;
    return false;
}

bool lc_tpl_single_var(const lc_tpl_t *t, int *slot)
{
    assert(t != NULL && slot != NULL);
    if (t->n_parts != 1 || t->parts[0].kind != PART_VAR || t->parts[0].n_filters != 0)
        return false;
    *slot = t->parts[0].slot;
    return true;
}

size_t lc_tpl_uses(const lc_tpl_t *t, int *slots, size_t max)
{
    assert(t != NULL && (slots != NULL || max == 0));
    for (size_t i = 0; i < t->n_uses && i < max; i++)
        slots[i] = t->uses[i];
    return t->n_uses;
}

bool lc_tpl_is_expression(const lc_tpl_t *t)
{
    assert(t != NULL);
    return t->n_parts == 1 && t->parts[0].kind != PART_LITERAL;
}

size_t lc_tpl_name_len(const char *s, size_t n)
{
    assert(s != NULL || n == 0);
    size_t first = word_len(s, n);
    if (first == 0 || first + 1 >= n || s[first] != '.')
        return first;
    size_t second = word_len(s + first + 1, n - first - 1);
    return second == 0 ? first : first + 1 + second;
}
