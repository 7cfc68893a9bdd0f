/* lc_extract.c — extractors: three ways to find matches in a body (JSONPath,
 * PCRE2, boundaries), one collector that turns the matches into the value a
 * pick asks for. */
#include "lc_extract.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "lc_err.h"
#include "lc_json_scan.h"

/* What one pcre2_match call may spend before it gives up (LC_EINVAL): about
 * 10 ms of JIT code at most, far beyond what a sane pattern needs on a body. */
#define REGEX_MATCH_LIMIT 1000000u
#define REGEX_DEPTH_LIMIT 100000u
#define REGEX_HEAP_LIMIT_KIB 16384u
#define REGEX_JIT_STACK_START (32u * 1024)
#define REGEX_JIT_STACK_MAX (1024u * 1024)

enum extractor_kind { KIND_JSON, KIND_REGEX, KIND_BETWEEN };

struct lc_extractor_s {
    uint8_t kind; /* enum extractor_kind */
    uint8_t pick; /* enum lc_pick */
    lc_jpath_t *path;   /* json */
    pcre2_code *re;     /* regex */
    uint32_t group;     /* regex: the group whose text is the value */
    uint32_t pairs;     /* regex: ovector pairs a match needs (group + 1) */
    char *left, *right; /* between */
    size_t left_len, right_len;
};

/* The collector ------------------------------------------------------------ */

/* Gathers matches as a pick needs them, without copying any but for LC_PICK_ALL. */
typedef struct collector_s {
    uint8_t pick;     /* enum lc_pick */
    bool json;        /* matches are JSON values (else text) */
    uint64_t *rng;
    lc_buf_t *out;
    uint64_t count;
    lc_jmatch_t chosen;
    int err;
} collector_t;

/* The step of the engine's generator (worker/rng.h): xorshift64*. */
static uint64_t rng_next(uint64_t *s)
{
    assert(*s != 0);
    uint64_t x = *s != 0 ? *s : 0x9E3779B97F4A7C15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static int append_json_element(collector_t *k, const lc_jmatch_t *m)
{
    if (lc_buf_append(k->out, k->count == 1 ? "[" : ",", 1) != 0)
        return LC_ENOMEM;
    if (!k->json)
        return lc_json_string_encode(m->v.data, m->v.len, k->out);
    /* A JSON string's raw text is already its encoding: only the quotes go back. */
    bool quoted = m->v.type == LC_V_STRING;
    if ((quoted && lc_buf_append(k->out, "\"", 1) != 0) ||
        lc_buf_append(k->out, m->v.data, m->v.len) != 0 ||
        (quoted && lc_buf_append(k->out, "\"", 1) != 0))
        return LC_ENOMEM;
    return 0;
}

/* Takes one match; returns whether more are wanted. */
static bool collect(collector_t *k, const lc_jmatch_t *m)
{
    k->count++;
    switch (k->pick) {
    case LC_PICK_FIRST:
        k->chosen = *m;
        return false;
    case LC_PICK_LAST:
        k->chosen = *m;
        return true;
    case LC_PICK_RANDOM: /* reservoir sampling: the n-th match replaces with chance 1/n */
        if (rng_next(k->rng) % k->count == 0)
            k->chosen = *m;
        return true;
    case LC_PICK_ALL:
        k->err = append_json_element(k, m);
        return k->err == 0;
    default:
        return true;
    }
}

static bool collect_json_cb(void *ctx, const lc_jmatch_t *m)
{
    return collect(ctx, m);
}

static bool collect_text(collector_t *k, const char *data, size_t len)
{
    lc_jmatch_t m = {.v = {.data = data, .len = len, .type = LC_V_STRING}, .escaped = false};
    return collect(k, &m);
}

/* After the last match: the value into out. */
static int collector_finish(collector_t *k, uint8_t *type)
{
    if (k->err != 0)
        return k->err;
    if (k->pick == LC_PICK_COUNT) {
        *type = LC_V_NUMBER;
        return lc_buf_appendf(k->out, "%" PRIu64, k->count);
    }
    if (k->count == 0)
        return LC_ENOTFOUND;
    if (k->pick == LC_PICK_ALL) {
        *type = LC_V_JSON;
        return lc_buf_append(k->out, "]", 1);
    }
    *type = k->chosen.v.type;
    if (k->chosen.escaped)
        return lc_json_string_decode(k->chosen.v.data, k->chosen.v.len, k->out);
    return lc_buf_append(k->out, k->chosen.v.data, k->chosen.v.len);
}

/* Regex scratch, per thread ------------------------------------------------ */

/* Match data and a JIT stack cannot be shared by threads matching at once,
 * and making them per call would allocate per response: each engine thread
 * keeps its own, grown to the largest pattern it has run. */
typedef struct regex_scratch_s {
    pcre2_match_context *mctx; /* the limits, and the JIT stack */
    pcre2_jit_stack *jit_stack;
    pcre2_match_data *md;
    uint32_t pairs;
} regex_scratch_t;

static _Thread_local regex_scratch_t scratch;

void lc_extract_thread_cleanup(void)
{
    pcre2_match_data_free(scratch.md);
    pcre2_jit_stack_free(scratch.jit_stack);
    pcre2_match_context_free(scratch.mctx);
    memset(&scratch, 0, sizeof scratch);
}

static int scratch_make_context(void)
{
    scratch.mctx = pcre2_match_context_create(NULL);
    if (scratch.mctx == NULL)
        return LC_ENOMEM;
    pcre2_set_match_limit(scratch.mctx, REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(scratch.mctx, REGEX_DEPTH_LIMIT);
    pcre2_set_heap_limit(scratch.mctx, REGEX_HEAP_LIMIT_KIB);
    uint32_t has_jit = 0;
    pcre2_config(PCRE2_CONFIG_JIT, &has_jit);
    if (has_jit) {
        scratch.jit_stack =
            pcre2_jit_stack_create(REGEX_JIT_STACK_START, REGEX_JIT_STACK_MAX, NULL);
        if (scratch.jit_stack == NULL)
            return LC_ENOMEM;
        pcre2_jit_stack_assign(scratch.mctx, NULL, scratch.jit_stack);
    }
    return 0;
}

/* The calling thread's scratch, with match data for at least pairs pairs. */
static int scratch_ready(uint32_t pairs)
{
    if (scratch.mctx == NULL && scratch_make_context() != 0) {
        lc_extract_thread_cleanup();
        return LC_ENOMEM;
    }
    if (scratch.pairs < pairs) {
        pcre2_match_data_free(scratch.md);
        scratch.pairs = 0;
        scratch.md = pcre2_match_data_create(pairs, NULL);
        if (scratch.md == NULL)
            return LC_ENOMEM;
        scratch.pairs = pairs;
    }
    return 0;
}

/* Finding matches ------------------------------------------------------------ */

static int regex_error(int rc)
{
    return rc == PCRE2_ERROR_NOMEMORY ? LC_ENOMEM : LC_EINVAL;
}

static int regex_collect(const lc_extractor_t *x, const char *body, size_t len, collector_t *k)
{
    int rv = scratch_ready(x->pairs);
    if (rv != 0)
        return rv;
    PCRE2_SPTR subject = (PCRE2_SPTR)(body != NULL ? body : "");
    size_t from = 0;
    while (from <= len) {
        int rc = pcre2_match(x->re, subject, len, from, 0, scratch.md, scratch.mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            return 0;
        if (rc < 0)
            return regex_error(rc); /* a limit, or no memory for the interpreter's frames */
        /* rc == 0: the ovector holds fewer pairs than the pattern has groups,
         * which is by design (only the pairs up to the group are kept). */
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(scratch.md);
        PCRE2_SIZE start = ov[2 * x->group], end = ov[2 * x->group + 1];
        if (start != PCRE2_UNSET && start <= end && !collect_text(k, body + start, end - start))
            return 0;
        /* An empty match moves on by one byte, so that none is found twice. */
        size_t next = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
        from = next > from ? next : from + 1;
    }
    return 0;
}

static int between_collect(const lc_extractor_t *x, const char *body, size_t len, collector_t *k)
{
    size_t from = 0;
    while (from <= len) {
        size_t start = 0, end = len;
        if (x->left_len > 0) {
            const char *l = memmem(body + from, len - from, x->left, x->left_len);
            if (l == NULL)
                return 0;
            start = (size_t)(l - body) + x->left_len;
        }
        if (x->right_len > 0) {
            const char *r = memmem(body + start, len - start, x->right, x->right_len);
            if (r == NULL)
                return 0;
            end = (size_t)(r - body);
        }
        if (!collect_text(k, body + start, end - start))
            return 0;
        if (x->left_len == 0 || x->right_len == 0)
            return 0; /* anchored at the start or the end: one match only */
        from = end + x->right_len;
    }
    return 0;
}

int lc_extractor_run(const lc_extractor_t *x, const char *body, size_t len, uint64_t *rng,
                     lc_buf_t *out, uint8_t *type)
{
    assert(x != NULL && out != NULL && type != NULL && (body != NULL || len == 0));
    assert(x->pick != LC_PICK_RANDOM || rng != NULL);
    uint64_t no_rng = 0x9E3779B97F4A7C15ULL; /* release builds survive a missing generator */
    if (rng == NULL)
        rng = &no_rng;
    if (body == NULL)
        body = "";
    size_t out_start = out->len;
    collector_t k = {.pick = x->pick, .json = x->kind == KIND_JSON, .rng = rng, .out = out};
    int rv;
    if (x->kind == KIND_JSON)
        rv = lc_jpath_scan(x->path, body, len, collect_json_cb, &k);
    else if (x->kind == KIND_REGEX)
        rv = regex_collect(x, body, len, &k);
    else
        rv = between_collect(x, body, len, &k);
    if (rv == 0)
        rv = collector_finish(&k, type);
    if (rv != 0 && out->data != NULL) {
        out->len = out_start;
        out->data[out_start] = '\0';
    }
    return rv;
}

/* Constructors ------------------------------------------------------------ */

static int new_extractor(lc_extractor_t **x, uint8_t kind, enum lc_pick pick, char *errmsg,
                         size_t errlen)
{
    assert(x != NULL);
    *x = NULL;
    if ((unsigned)pick > LC_PICK_COUNT)
        return lc_errf(errmsg, errlen, LC_EINVAL, "unknown pick %d", (int)pick);
    *x = calloc(1, sizeof **x);
    if (*x == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "%s", lc_strerror(LC_ENOMEM));
    (*x)->kind = kind;
    (*x)->pick = (uint8_t)pick;
    return 0;
}

int lc_extractor_json(lc_extractor_t **x, const char *path, enum lc_pick pick, char *errmsg,
                      size_t errlen)
{
    assert(path != NULL);
    int rv = new_extractor(x, KIND_JSON, pick, errmsg, errlen);
    if (rv == 0 && (rv = lc_jpath_compile(&(*x)->path, path, errmsg, errlen)) != 0) {
        lc_extractor_free(*x);
        *x = NULL;
    }
    return rv;
}

/* The group number a group argument names in re. */
static int resolve_group(const pcre2_code *re, const char *pattern, const char *group,
                         uint32_t *out, char *errmsg, size_t errlen)
{
    uint32_t groups = 0;
    pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
    if (group == NULL) {
        *out = groups > 0 ? 1 : 0;
        return 0;
    }
    size_t digits = strspn(group, "0123456789");
    if (digits > 0 && group[digits] == '\0') {
        unsigned long n = digits <= 5 ? strtoul(group, NULL, 10) : ULONG_MAX;
        if (n > groups)
            return lc_errf(errmsg, errlen, LC_EINVAL,
                           "%s: no group %s (the pattern has %" PRIu32 ")", pattern, group, groups);
        *out = (uint32_t)n;
        return 0;
    }
    int n = pcre2_substring_number_from_name(re, (PCRE2_SPTR)group);
    if (n < 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "%s: no group named '%s'", pattern, group);
    *out = (uint32_t)n;
    return 0;
}

static int compile_regex(lc_extractor_t *x, const char *pattern, const char *group,
                         char *errmsg, size_t errlen)
{
    int code;
    PCRE2_SIZE offset;
    x->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
    if (x->re == NULL) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        return lc_errf(errmsg, errlen, code == PCRE2_ERROR_HEAPLIMIT ? LC_ENOMEM : LC_EINVAL,
                       "%s: %s at offset %zu", pattern, (const char *)msg, (size_t)offset);
    }
    int rv = resolve_group(x->re, pattern, group, &x->group, errmsg, errlen);
    if (rv != 0)
        return rv;
    x->pairs = x->group + 1;
    /* Without JIT (an unsupported CPU) pcre2_match interprets: slower, still correct. */
    (void)pcre2_jit_compile(x->re, PCRE2_JIT_COMPLETE);
    return 0;
}

int lc_extractor_regex(lc_extractor_t **x, const char *pattern, const char *group,
                       enum lc_pick pick, char *errmsg, size_t errlen)
{
    assert(pattern != NULL);
    int rv = new_extractor(x, KIND_REGEX, pick, errmsg, errlen);
    if (rv == 0 && (rv = compile_regex(*x, pattern, group, errmsg, errlen)) != 0) {
        lc_extractor_free(*x);
        *x = NULL;
    }
    return rv;
}

int lc_extractor_between(lc_extractor_t **x, const char *left, const char *right,
                         enum lc_pick pick, char *errmsg, size_t errlen)
{
    assert(left != NULL && right != NULL);
    int rv = new_extractor(x, KIND_BETWEEN, pick, errmsg, errlen);
    if (rv != 0)
        return rv;
    (*x)->left = strdup(left);
    (*x)->right = strdup(right);
    if ((*x)->left == NULL || (*x)->right == NULL) {
        lc_extractor_free(*x);
        *x = NULL;
        return lc_errf(errmsg, errlen, LC_ENOMEM, "%s", lc_strerror(LC_ENOMEM));
    }
    (*x)->left_len = strlen(left);
    (*x)->right_len = strlen(right);
    return 0;
}

void lc_extractor_free(lc_extractor_t *x)
{
    if (x == NULL)
        return;
    lc_jpath_free(x->path);
    pcre2_code_free(x->re);
    free(x->left);
    free(x->right);
    free(x);
}
