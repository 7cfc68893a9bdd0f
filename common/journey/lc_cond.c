/* lc_cond.c — conditions: a recursive-descent compiler to a small tree of nodes, and its
 * evaluator. */
#include "lc_cond.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_rng.h"

enum node_kind {
    NODE_OR,       /* left || right */
    NODE_AND,      /* left && right */
    NODE_NOT,      /* !left */
    NODE_CMP,      /* left op right */
    NODE_CONTAINS, /* contains(left, right) */
    NODE_EXISTS,   /* exists(slot) */
    NODE_CONST,    /* a number, string or boolean literal */
    NODE_TPL,      /* ${…} */
    NODE_RAND,     /* rand() */
};

enum cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

/* What a text is as a number, as a whole. */
enum number_form { FORM_UNKNOWN, FORM_NONE, FORM_INTEGER, FORM_DECIMAL };

typedef struct node_s {
    uint8_t kind;        /* enum node_kind */
    uint8_t op;          /* CMP: enum cmp_op */
    int16_t left, right; /* children, -1 for none */
    int slot;            /* EXISTS */
    lc_tpl_t *tpl;       /* TPL, owned */
    lc_value_t value;    /* CONST: its bytes (in the source or strings) and type */
    uint8_t form;        /* CONST: enum number_form of value */
    double num;          /* CONST of FORM_INTEGER or FORM_DECIMAL */
} node_t;

struct lc_cond_s {
    char *source;  /* NUL-terminated copy; number literals point into it */
    char *strings; /* string literals, unescaped */
    node_t *nodes;
    size_t n_nodes;
    int16_t root;
    int *uses; /* distinct slots of the TPL nodes, in order of first use */
    size_t n_uses;
};

static const lc_value_t true_value = {"true", 4, LC_V_BOOL};
static const lc_value_t false_value = {"false", 5, LC_V_BOOL};

/* Numbers ------------------------------------------------------------------------------------- */

static size_t digits_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

/* Length of the decimal number s starts with, 0 when none. OUT: *form, integer or decimal. */
static size_t number_len(const char *s, size_t n, uint8_t *form)
{
    size_t i = n > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    size_t whole = digits_len(s + i, n - i);
    i += whole;
    *form = FORM_INTEGER;
    if (i < n && s[i] == '.') {
        size_t fraction = digits_len(s + i + 1, n - i - 1);
        if (whole == 0 && fraction == 0)
            return 0;
        i += 1 + fraction;
        *form = FORM_DECIMAL;
    } else if (whole == 0) {
        return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-') ? i + 2 : i + 1;
        size_t exponent = digits_len(s + j, n - j);
        if (exponent > 0) {
            i = j + exponent;
            *form = FORM_DECIMAL;
        }
    }
    return i;
}

static uint8_t number_form(const char *s, size_t n)
{
    uint8_t form;
    if (n == 0 || n > LC_COND_NUMBER_MAX || number_len(s, n, &form) != n)
        return FORM_NONE;
    return form;
}

/* The value of a text number_form accepted; strtod reads it in the C locale, which the
 * programs never change. */
static double number_value(const char *s, size_t n)
{
    char text[LC_COND_NUMBER_MAX + 1];
    assert(n <= LC_COND_NUMBER_MAX);
    memcpy(text, s, n);
    text[n] = '\0';
    return strtod(text, NULL);
}

/* Strips an integer text's sign and leading zeros; returns whether it is below zero. */
static bool integer_magnitude(const char **s, size_t *n)
{
    bool negative = (*s)[0] == '-';
    if ((*s)[0] == '-' || (*s)[0] == '+') {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && (*s)[0] == '0') {
        (*s)++;
        (*n)--;
    }
    return negative && *n > 0;
}

/* Compares two integer texts exactly, at any length (doubles would make long ids equal). */
static int compare_integers(const char *a, size_t an, const char *b, size_t bn)
{
    bool a_negative = integer_magnitude(&a, &an), b_negative = integer_magnitude(&b, &bn);
    if (a_negative != b_negative)
        return a_negative ? -1 : 1;
    int magnitude = an != bn ? (an < bn ? -1 : 1) : memcmp(a, b, an);
    magnitude = (magnitude > 0) - (magnitude < 0);
    return a_negative ? -magnitude : magnitude;
}

/* Compilation -------------------------------------------------------------------------------- */

typedef struct parser_s {
    lc_cond_t *c;
    const char *src;
    size_t len, pos;
    size_t depth;        /* '(' '!' and calls open around pos */
    size_t strings_len;  /* bytes of c->strings used */
    const lc_tpl_names_t *names;
    char *errmsg;
    size_t errlen;
} parser_t;

#define SOURCE_SHOWN 200 /* of the source, in an error message */

static int parse_errf(parser_t *p, size_t at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int parse_errf(parser_t *p, size_t at, int code, const char *fmt, ...)
{
    char what[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t shown = p->len < SOURCE_SHOWN ? p->len : SOURCE_SHOWN;
    return lc_errf(p->errmsg, p->errlen, code, "%.*s%s: %s at offset %zu", (int)shown, p->src,
                   shown < p->len ? "..." : "", what, at);
}

static void skip_spaces(parser_t *p)
{
    while (p->pos < p->len && (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' ||
                               p->src[p->pos] == '\r' || p->src[p->pos] == '\n'))
        p->pos++;
}

/* Consumes token after optional spaces when it is there. */
static bool match(parser_t *p, const char *token)
{
    skip_spaces(p);
    size_t n = strlen(token);
    if (p->len - p->pos < n || memcmp(p->src + p->pos, token, n) != 0)
        return false;
    p->pos += n;
    return true;
}

static int expect(parser_t *p, const char *token)
{
    return match(p, token) ? 0 : parse_errf(p, p->pos, LC_EINVAL, "expected '%s'", token);
}

static int enter(parser_t *p)
{
    if (++p->depth > LC_COND_DEPTH_MAX)
        return parse_errf(p, p->pos, LC_ETOOBIG, "nested deeper than %d", LC_COND_DEPTH_MAX);
    return 0;
}

static int new_node(parser_t *p, uint8_t kind, int16_t left, int16_t right, int16_t *id)
{
    lc_cond_t *c = p->c;
    if (c->n_nodes == LC_COND_NODES_MAX)
        return parse_errf(p, p->pos, LC_ETOOBIG, "more than %d operands and operators",
                          LC_COND_NODES_MAX);
    *id = (int16_t)c->n_nodes;
    c->nodes[c->n_nodes++] = (node_t){.kind = kind, .left = left, .right = right};
    return 0;
}

static int parse_or(parser_t *p, int16_t *out);
static int parse_operand(parser_t *p, int16_t *out);

/* '(' expr ')' */
static int parse_group(parser_t *p, int16_t *out)
{
    p->pos++;
    int rv = enter(p);
    if (rv == 0)
        rv = parse_or(p, out);
    p->depth--;
    return rv == 0 ? expect(p, ")") : rv;
}

/* A quoted string, unescaped into c->strings. */
static int parse_string(parser_t *p, int16_t *out)
{
    size_t start = p->pos;
    char quote = p->src[p->pos++], *text = p->c->strings + p->strings_len;
    size_t n = 0;
    for (;;) {
        if (p->pos == p->len)
            return parse_errf(p, start, LC_EINVAL, "unterminated string");
        char ch = p->src[p->pos++];
        if (ch == quote)
            break;
        if (ch == '$' && p->pos < p->len && p->src[p->pos] == '{')
            return parse_errf(p, p->pos - 1, LC_EINVAL,
                              "${ inside quotes (a value is written ${x}, without quotes)");
        if (ch == '\\' && p->pos < p->len) {
            ch = p->src[p->pos++];
            if (ch != '\'' && ch != '"' && ch != '\\')
                return parse_errf(p, p->pos - 2, LC_EINVAL,
                                  "unknown escape (a string knows \\' \\\" and \\\\)");
        }
        text[n++] = ch;
    }
    int rv = new_node(p, NODE_CONST, -1, -1, out);
    if (rv != 0)
        return rv;
    node_t *node = &p->c->nodes[*out];
    node->value = (lc_value_t){text, n, LC_V_STRING};
    node->form = number_form(text, n);
    node->num = node->form != FORM_NONE ? number_value(text, n) : 0;
    p->strings_len += n;
    return 0;
}

static int parse_number(parser_t *p, size_t n, uint8_t form, int16_t *out)
{
    const char *text = p->src + p->pos;
    if (n > LC_COND_NUMBER_MAX)
        return parse_errf(p, p->pos, LC_ETOOBIG, "number longer than %d bytes",
                          LC_COND_NUMBER_MAX);
    int rv = new_node(p, NODE_CONST, -1, -1, out);
    if (rv != 0)
        return rv;
    node_t *node = &p->c->nodes[*out];
    node->value = (lc_value_t){text, n, LC_V_NUMBER};
    node->form = form;
    node->num = number_value(text, n);
    p->pos += n;
    return 0;
}

/* ${…}: compiled as a template of its own. */
static int parse_template(parser_t *p, int16_t *out)
{
    size_t at = p->pos;
    const char *close = memchr(p->src + at, '}', p->len - at);
    if (close == NULL)
        return parse_errf(p, at, LC_EINVAL, "unterminated ${");
    size_t n = (size_t)(close - (p->src + at)) + 1;
    char why[160];
    lc_tpl_t *t;
    int rv = lc_tpl_compile(&t, p->src + at, n, LC_TPL_RAW, p->names, why, sizeof why);
    if (rv == LC_ENOMEM)
        return rv;
    if (rv != 0) {
        size_t shown = p->len < SOURCE_SHOWN ? p->len : SOURCE_SHOWN;
        return lc_errf(p->errmsg, p->errlen, rv, "%.*s%s: %s (in the ${ at offset %zu)",
                       (int)shown, p->src, shown < p->len ? "..." : "", why, at);
    }
    assert(lc_tpl_is_expression(t)); /* one "${", no '}' before the last byte */
    if ((rv = new_node(p, NODE_TPL, -1, -1, out)) != 0) {
        lc_tpl_free(t);
        return rv;
    }
    p->c->nodes[*out].tpl = t;
    p->pos += n;
    return 0;
}

/* exists(name) or exists(${name}), after the word. */
static int parse_exists(parser_t *p, int16_t *out)
{
    int rv = expect(p, "(");
    if (rv != 0)
        return rv;
    bool braced = match(p, "${");
    skip_spaces(p);
    size_t at = p->pos, n = lc_tpl_name_len(p->src + at, p->len - at);
    if (n == 0)
        return parse_errf(p, at, LC_EINVAL, "exists() takes a variable name");
    if (n > LC_TPL_NAME_MAX)
        return parse_errf(p, at, LC_ETOOBIG, "name longer than %d characters", LC_TPL_NAME_MAX);
    int slot = p->names != NULL ? p->names->resolve(p->names->ctx, p->src + at, n) : -1;
    if (slot < 0)
        return parse_errf(p, at, LC_EINVAL, "unknown variable %.*s", (int)n, p->src + at);
    p->pos += n;
    if ((braced && (rv = expect(p, "}")) != 0) || (rv = expect(p, ")")) != 0)
        return rv;
    if ((rv = new_node(p, NODE_EXISTS, -1, -1, out)) == 0)
        p->c->nodes[*out].slot = slot;
    return rv;
}

/* contains(operand, operand), after the word. */
static int parse_contains(parser_t *p, int16_t *out)
{
    int16_t haystack, needle;
    int rv = enter(p);
    if (rv == 0)
        rv = expect(p, "(");
    if (rv == 0)
        rv = parse_operand(p, &haystack);
    if (rv == 0)
        rv = expect(p, ",");
    if (rv == 0)
        rv = parse_operand(p, &needle);
    if (rv == 0)
        rv = expect(p, ")");
    p->depth--;
    return rv == 0 ? new_node(p, NODE_CONTAINS, haystack, needle, out) : rv;
}

/* true, false, exists(…), contains(…) or rand(). */
static int parse_word(parser_t *p, size_t n, int16_t *out)
{
    const char *word = p->src + p->pos;
    size_t at = p->pos;
    p->pos += n;
    if ((n == 4 && memcmp(word, "true", 4) == 0) || (n == 5 && memcmp(word, "false", 5) == 0)) {
        int rv = new_node(p, NODE_CONST, -1, -1, out);
        if (rv == 0) {
            p->c->nodes[*out].value = n == 4 ? true_value : false_value;
            p->c->nodes[*out].form = FORM_NONE;
        }
        return rv;
    }
    if (n == 6 && memcmp(word, "exists", 6) == 0)
        return parse_exists(p, out);
    if (n == 8 && memcmp(word, "contains", 8) == 0)
        return parse_contains(p, out);
    if (n == 4 && memcmp(word, "rand", 4) == 0) {
        int rv = expect(p, "(");
        if (rv == 0 && !match(p, ")"))
            return parse_errf(p, p->pos, LC_EINVAL,
                              "rand() takes no arguments (${rand(a,b)} draws an integer)");
        return rv == 0 ? new_node(p, NODE_RAND, -1, -1, out) : rv;
    }
    return parse_errf(p, at, LC_EINVAL, "unknown word %.*s (a variable is written ${%.*s})",
                      (int)(n < 64 ? n : 64), word, (int)(n < 64 ? n : 64), word);
}

static int parse_operand(parser_t *p, int16_t *out)
{
    skip_spaces(p);
    size_t at = p->pos;
    if (at == p->len)
        return parse_errf(p, at, LC_EINVAL, "expected an operand");
    char ch = p->src[at];
    if (ch == '(')
        return parse_group(p, out);
    if (ch == '"' || ch == '\'')
        return parse_string(p, out);
    if (ch == '$' && at + 1 < p->len && p->src[at + 1] == '{')
        return parse_template(p, out);
    uint8_t form;
    size_t n = number_len(p->src + at, p->len - at, &form);
    if (n > 0)
        return parse_number(p, n, form, out);
    if ((n = lc_tpl_name_len(p->src + at, p->len - at)) > 0)
        return parse_word(p, n, out);
    return parse_errf(p, at, LC_EINVAL, "expected an operand");
}

static int parse_cmp(parser_t *p, int16_t *out)
{
    static const struct {
        const char *token;
        uint8_t op;
    } ops[] = {{"==", CMP_EQ}, {"!=", CMP_NE}, {"<=", CMP_LE},
               {">=", CMP_GE}, {"<", CMP_LT},  {">", CMP_GT}};
    int rv = parse_operand(p, out);
    for (size_t i = 0; rv == 0 && i < sizeof ops / sizeof ops[0]; i++) {
        if (!match(p, ops[i].token))
            continue;
        int16_t right;
        if ((rv = parse_operand(p, &right)) == 0 &&
            (rv = new_node(p, NODE_CMP, *out, right, out)) == 0)
            p->c->nodes[*out].op = ops[i].op;
        return rv;
    }
    return rv;
}

static int parse_not(parser_t *p, int16_t *out)
{
    skip_spaces(p);
    bool negated = p->pos < p->len && p->src[p->pos] == '!' &&
                   !(p->pos + 1 < p->len && p->src[p->pos + 1] == '=');
    if (!negated)
        return parse_cmp(p, out);
    p->pos++;
    int16_t child;
    int rv = enter(p);
    if (rv == 0)
        rv = parse_not(p, &child);
    p->depth--;
    return rv == 0 ? new_node(p, NODE_NOT, child, -1, out) : rv;
}

/* One level of left-associative binary operators: next (token next)*. */
static int parse_binary(parser_t *p, const char *token, uint8_t kind,
                        int (*next)(parser_t *, int16_t *), int16_t *out)
{
    int rv = next(p, out);
    while (rv == 0 && match(p, token)) {
        int16_t right;
        if ((rv = next(p, &right)) == 0)
            rv = new_node(p, kind, *out, right, out);
    }
    return rv;
}

static int parse_and(parser_t *p, int16_t *out)
{
    return parse_binary(p, "&&", NODE_AND, parse_not, out);
}

static int parse_or(parser_t *p, int16_t *out)
{
    return parse_binary(p, "||", NODE_OR, parse_and, out);
}

/* What follows a whole expression, when anything does. */
static int trailing_text_error(parser_t *p)
{
    char ch = p->src[p->pos];
    const char *hint = ch == '=' ? " (equality is '==')"
                       : ch == '&' ? " (and is '&&')"
                       : ch == '|' ? " (or is '||')"
                                   : "";
    if (ch >= 0x21 && ch < 0x7f)
        return parse_errf(p, p->pos, LC_EINVAL, "unexpected '%c' after the expression%s", ch,
                          hint);
    return parse_errf(p, p->pos, LC_EINVAL, "unexpected byte 0x%02x after the expression",
                      (unsigned char)ch);
}

static int add_use(lc_cond_t *c, int slot)
{
    for (size_t i = 0; i < c->n_uses; i++)
        if (c->uses[i] == slot)
            return 0;
    int *uses = realloc(c->uses, (c->n_uses + 1) * sizeof *uses); /* compile time, few uses */
    if (uses == NULL)
        return LC_ENOMEM;
    c->uses = uses;
    c->uses[c->n_uses++] = slot;
    return 0;
}

/* The slots the TPL nodes read; exists() reads none (it only asks). */
static int collect_uses(lc_cond_t *c)
{
    for (size_t i = 0; i < c->n_nodes; i++) {
        int slot;
        if (c->nodes[i].kind != NODE_TPL || lc_tpl_uses(c->nodes[i].tpl, &slot, 1) == 0)
            continue;
        assert(lc_tpl_uses(c->nodes[i].tpl, NULL, 0) == 1); /* an expression reads one slot */
        if (add_use(c, slot) != 0)
            return LC_ENOMEM;
    }
    return 0;
}

static int parse_all(parser_t *p)
{
    int rv = parse_or(p, &p->c->root);
    if (rv != 0)
        return rv;
    skip_spaces(p);
    if (p->pos < p->len)
        return trailing_text_error(p);
    assert(p->depth == 0);
    return collect_uses(p->c);
}

int lc_cond_compile(lc_cond_t **out, const char *src, size_t len, const lc_tpl_names_t *names,
                    char *errmsg, size_t errlen)
{
    assert(out != NULL && (src != NULL || len == 0));
    *out = NULL;
    if (len > LC_COND_SOURCE_MAX)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "condition longer than %d bytes",
                       LC_COND_SOURCE_MAX);
    lc_cond_t *c = calloc(1, sizeof *c);
    int rv = LC_ENOMEM;
    if (c != NULL && (c->source = malloc(len + 1)) != NULL &&
        (c->strings = malloc(len + 1)) != NULL &&
        (c->nodes = calloc(LC_COND_NODES_MAX, sizeof *c->nodes)) != NULL) {
        if (len > 0)
            memcpy(c->source, src, len);
        c->source[len] = '\0';
        parser_t p = {.c = c, .src = c->source, .len = len, .names = names,
                      .errmsg = errmsg, .errlen = errlen};
        rv = parse_all(&p);
    }
    if (rv == 0) {
        node_t *fitted = realloc(c->nodes, c->n_nodes * sizeof *fitted);
        c->nodes = fitted != NULL ? fitted : c->nodes; /* a failed shrink keeps the larger */
        *out = c;
        return 0;
    }
    lc_cond_free(c);
    return rv == LC_ENOMEM ? lc_errf(errmsg, errlen, rv, "out of memory") : rv;
}

void lc_cond_free(lc_cond_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_nodes; i++)
        lc_tpl_free(c->nodes[i].tpl);
    free(c->nodes);
    free(c->strings);
    free(c->source);
    free(c->uses);
    free(c);
}

/* Evaluation --------------------------------------------------------------------------------- */

#define SCRATCH_BYTES 128 /* an operand's rendering that fits stays on the stack */

typedef struct scratch_s {
    char bytes[SCRATCH_BYTES];
    lc_buf_t spill; /* for a longer one */
} scratch_t;

/* An operand's value during one evaluation. */
typedef struct operand_s {
    lc_value_t value;
    uint8_t form;      /* enum number_form of value, FORM_UNKNOWN until asked */
    bool has_num;      /* num holds the number */
    bool text_pending; /* rand(): value's bytes are written from num only when asked */
    double num;
    char text[32];
} operand_t;

static int eval_bool(const lc_cond_t *c, int16_t id, const lc_tpl_env_t *env, bool *out);

static int eval_operand(const lc_cond_t *c, int16_t id, const lc_tpl_env_t *env, scratch_t *s,
                        operand_t *o)
{
    const node_t *n = &c->nodes[id];
    o->form = FORM_UNKNOWN;
    o->has_num = o->text_pending = false;
    switch (n->kind) {
    case NODE_CONST:
        o->value = n->value;
        o->form = n->form;
        o->has_num = n->form != FORM_NONE;
        o->num = n->num;
        return 0;
    case NODE_TPL:
        return lc_tpl_value(n->tpl, env, s->bytes, sizeof s->bytes, &s->spill, &o->value);
    case NODE_RAND:
        assert(env->rng != NULL);
        o->value = (lc_value_t){NULL, 0, LC_V_NUMBER};
        o->num = lc_rng_unit(env->rng);
        o->form = FORM_DECIMAL;
        o->has_num = o->text_pending = true;
        return 0;
    default: { /* a condition used as an operand: (a < b) == true */
        bool truth = false;
        int rv = eval_bool(c, id, env, &truth);
        o->value = truth ? true_value : false_value;
        o->form = FORM_NONE;
        return rv;
    }
    }
}

static uint8_t operand_form(operand_t *o)
{
    if (o->form == FORM_UNKNOWN)
        o->form = number_form(o->value.data, o->value.len);
    return o->form;
}

/* The number of an operand whose form is not FORM_NONE. */
static double operand_num(operand_t *o)
{
    assert(operand_form(o) != FORM_NONE);
    if (!o->has_num) {
        o->num = number_value(o->value.data, o->value.len);
        o->has_num = true;
    }
    return o->num;
}

static const lc_value_t *operand_bytes(operand_t *o)
{
    if (o->text_pending) {
        int n = snprintf(o->text, sizeof o->text, "%.17g", o->num);
        o->value.data = o->text;
        o->value.len = n > 0 ? (size_t)n : 0;
        o->text_pending = false;
    }
    return &o->value;
}

static int compare_bytes(const lc_value_t *a, const lc_value_t *b)
{
    size_t common = a->len < b->len ? a->len : b->len;
    int order = common > 0 ? memcmp(a->data, b->data, common) : 0;
    if (order == 0)
        return (a->len > b->len) - (a->len < b->len);
    return order < 0 ? -1 : 1;
}

/* -1, 0 or 1: numbers by value (integers exactly), anything else by its bytes. */
static int operand_order(operand_t *l, operand_t *r)
{
    uint8_t lf = operand_form(l), rf = operand_form(r);
    if (lf == FORM_INTEGER && rf == FORM_INTEGER)
        return compare_integers(l->value.data, l->value.len, r->value.data, r->value.len);
    if (lf != FORM_NONE && rf != FORM_NONE) {
        double a = operand_num(l), b = operand_num(r);
        return (a > b) - (a < b);
    }
    return compare_bytes(operand_bytes(l), operand_bytes(r));
}

static bool decide_compare(uint8_t op, operand_t *l, operand_t *r)
{
    int order = operand_order(l, r);
    switch (op) {
    case CMP_EQ: return order == 0;
    case CMP_NE: return order != 0;
    case CMP_LT: return order < 0;
    case CMP_LE: return order <= 0;
    case CMP_GT: return order > 0;
    case CMP_GE: return order >= 0;
    }
    assert(!"a comparison parse_cmp never makes");
    return false;
}

static bool decide_contains(uint8_t op, operand_t *haystack, operand_t *needle)
{
    const lc_value_t *h = operand_bytes(haystack), *n = operand_bytes(needle);
    return n->len == 0 || (h->len >= n->len && memmem(h->data, h->len, n->data, n->len) != NULL);
}

/* Evaluates node n's two operands, each into a scratch of its own, and decides on them. */
static int eval_pair(const lc_cond_t *c, const node_t *n, const lc_tpl_env_t *env,
                     bool (*decide)(uint8_t op, operand_t *l, operand_t *r), bool *out)
{
    scratch_t ls, rs;
    operand_t l, r;
    lc_buf_init(&ls.spill);
    lc_buf_init(&rs.spill);
    int rv = eval_operand(c, n->left, env, &ls, &l);
    if (rv == 0)
        rv = eval_operand(c, n->right, env, &rs, &r);
    if (rv == 0)
        *out = decide(n->op, &l, &r);
    lc_buf_free(&ls.spill);
    lc_buf_free(&rs.spill);
    return rv;
}

/* Whether an operand standing alone holds: true, a number but 0, a non-empty text. */
static bool truthy(operand_t *o)
{
    switch (o->value.type) {
    case LC_V_BOOL:
        return o->value.len == 4 && memcmp(o->value.data, "true", 4) == 0;
    case LC_V_NULL:
        return false;
    case LC_V_NUMBER:
        if (operand_form(o) != FORM_NONE)
            return operand_num(o) != 0;
        break; /* a number's text we cannot read: as a string */
    }
    return o->value.len > 0 || o->text_pending;
}

static int eval_truth(const lc_cond_t *c, int16_t id, const lc_tpl_env_t *env, bool *out)
{
    scratch_t s;
    operand_t o;
    lc_buf_init(&s.spill);
    int rv = eval_operand(c, id, env, &s, &o);
    if (rv == 0)
        *out = truthy(&o);
    lc_buf_free(&s.spill);
    return rv;
}

static int eval_bool(const lc_cond_t *c, int16_t id, const lc_tpl_env_t *env, bool *out)
{
    const node_t *n = &c->nodes[id];
    lc_value_t ignored;
    int rv;
    switch (n->kind) {
    case NODE_OR:
    case NODE_AND:
        rv = eval_bool(c, n->left, env, out);
        if (rv != 0 || *out == (n->kind == NODE_OR))
            return rv; /* the left side decides: later operands may read unset variables */
        return eval_bool(c, n->right, env, out);
    case NODE_NOT:
        rv = eval_bool(c, n->left, env, out);
        *out = !*out;
        return rv;
    case NODE_CMP:
        return eval_pair(c, n, env, decide_compare, out);
    case NODE_CONTAINS:
        return eval_pair(c, n, env, decide_contains, out);
    case NODE_EXISTS:
        assert(env->get != NULL);
        *out = env->get(env->ctx, n->slot, &ignored);
        return 0;
    }
    return eval_truth(c, id, env, out);
}

int lc_cond_eval(const lc_cond_t *c, const lc_tpl_env_t *env, bool *out)
{
    assert(c != NULL && env != NULL && out != NULL);
    *out = false;
    return eval_bool(c, c->root, env, out);
}

size_t lc_cond_uses(const lc_cond_t *c, int *slots, size_t max)
{
    assert(c != NULL && (slots != NULL || max == 0));
    for (size_t i = 0; i < c->n_uses && i < max; i++)
        slots[i] = c->uses[i];
    return c->n_uses;
}

const char *lc_cond_source(const lc_cond_t *c)
{
    assert(c != NULL);
    return c->source;
}
