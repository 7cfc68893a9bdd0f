/* fuzz_tpl.c — lc_tpl and lc_cond on arbitrary text, rendered and evaluated with a fixed set of
 * variables (one unset, one past lc_cond's stack scratch). The first byte picks the mode; the
 * rest is compiled both as a template and as a condition. Properties: a render succeeds or
 * names an unset variable and leaves the buffer as it was; the same generator state renders
 * the same bytes; LC_TPL_JSON_STR output is the inside of a valid JSON string (jansson parses
 * it quoted) and LC_TPL_FORM output only unreserved bytes, '+' and %XX; a value typed JSON is
 * valid JSON; an expression's lc_tpl_value is what it renders; uses() lists known slots once;
 * a condition evaluates alike twice. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_cond.h"
#include "lc_err.h"
#include "lc_tpl.h"

typedef struct var_s {
    const char *name;
    const char *data;
    size_t len;
    uint8_t type;
    bool set;
} var_t;

static char long_value[300];

#define VAR(name, text, type) {name, text, sizeof text - 1, type, true}
static var_t vars[] = {
    VAR("a", "abc", LC_V_STRING),
    VAR("n", "42", LC_V_NUMBER),
    VAR("s", "q\"\\\x01\n\0\xc3\xa9\xff<", LC_V_STRING),
    VAR("j", "{\"k\":[1,\"x\"]}", LC_V_JSON),
    VAR("b", "true", LC_V_BOOL),
    VAR("z", "null", LC_V_NULL),
    VAR("e", "", LC_V_STRING),
    {"u", NULL, 0, LC_V_STRING, false},
    VAR("f.c", "x y&z", LC_V_STRING),
    {"long", long_value, sizeof long_value, LC_V_STRING, true},
};
#define N_VARS (int)(sizeof vars / sizeof vars[0])

static int resolve(void *ctx, const char *name, size_t len)
{
    for (int i = 0; i < N_VARS; i++)
        if (strlen(vars[i].name) == len && memcmp(vars[i].name, name, len) == 0)
            return i;
    return -1;
}

static bool get(void *ctx, int slot, lc_value_t *out)
{
    FUZZ_CHECK(slot >= 0 && slot < N_VARS, "get of slot %d", slot);
    *out = (lc_value_t){vars[slot].data, vars[slot].len, vars[slot].type};
    return vars[slot].set;
}

static const lc_tpl_names_t names = {resolve, NULL};

static lc_tpl_env_t env_with(uint64_t *rng, const char **missing)
{
    return (lc_tpl_env_t){.get = get, .user_id = 7, .iteration = 3, .now_ms = 1700000000000ULL,
                          .rng = rng, .missing = missing};
}

static void check_slots(const int *slots, size_t n, size_t total)
{
    FUZZ_CHECK(n == total, "uses() said %zu, then %zu", total, n);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(slots[i] >= 0 && slots[i] < N_VARS, "used slot %d", slots[i]);
        for (size_t k = 0; k < i; k++)
            FUZZ_CHECK(slots[k] != slots[i], "slot %d used twice", slots[i]);
    }
}

static void check_json_string_body(const lc_buf_t *out)
{
    char *quoted = malloc(out->len + 2);
    if (quoted == NULL)
        abort();
    quoted[0] = '"';
    if (out->len > 0)
        memcpy(quoted + 1, out->data, out->len);
    quoted[out->len + 1] = '"';
    json_error_t err;
    json_t *j = json_loadb(quoted, out->len + 2, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    FUZZ_CHECK(j != NULL && json_is_string(j), "JSON_STR output is no string body: %s", err.text);
    json_decref(j);
    free(quoted);
}

static bool is_upper_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

static bool form_keeps(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           c == '*' || c == '-' || c == '.' || c == '_' || c == '+';
}

static void check_form(const lc_buf_t *out)
{
    for (size_t i = 0; i < out->len; i++) {
        if (out->data[i] != '%') {
            FUZZ_CHECK(form_keeps(out->data[i]), "byte 0x%02x in form output",
                       (unsigned char)out->data[i]);
            continue;
        }
        FUZZ_CHECK(i + 2 < out->len && is_upper_hex(out->data[i + 1]) &&
                       is_upper_hex(out->data[i + 2]),
                   "bad %% escape at %zu", i);
        i += 2;
    }
}

/* An expression's value is what it renders; a value typed JSON is JSON. */
static void check_value(const lc_tpl_t *t, const lc_buf_t *rendered)
{
    uint64_t rng = 99;
    char scratch[32];
    lc_buf_t spill = {0};
    lc_value_t v;
    lc_tpl_env_t env = env_with(&rng, NULL);
    int rv = lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v);
    FUZZ_CHECK(rv == 0, "lc_tpl_value failed (%d) where the render did not", rv);
    FUZZ_CHECK(v.len == rendered->len && (v.len == 0 || memcmp(v.data, rendered->data, v.len) == 0),
               "lc_tpl_value differs from the render");
    if (v.type == LC_V_JSON) {
        json_error_t err;
        json_t *j = json_loadb(v.data, v.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        FUZZ_CHECK(j != NULL, "a value typed JSON does not parse: %s", err.text);
        json_decref(j);
    }
    lc_buf_free(&spill);
}

static int render(const lc_tpl_t *t, uint64_t seed, lc_buf_t *out, const char **missing)
{
    uint64_t rng = seed;
    lc_tpl_env_t env = env_with(&rng, missing);
    return lc_tpl_render(t, &env, out);
}

static void fuzz_template(const char *src, size_t len, lc_tpl_mode_t mode)
{
    lc_tpl_t *t;
    char err[256];
    if (lc_tpl_compile(&t, src, len, mode, &names, err, sizeof err) != 0)
        return;
    int slots[LC_TPL_PARTS_MAX], slot;
    size_t total = lc_tpl_uses(t, NULL, 0);
    check_slots(slots, lc_tpl_uses(t, slots, LC_TPL_PARTS_MAX), total);
    if (lc_tpl_single_var(t, &slot))
        FUZZ_CHECK(total == 1 && slots[0] == slot, "a single variable reads %zu slots", total);
    lc_buf_t a = {0}, b = {0};
    const char *missing = NULL;
    lc_buf_append(&a, "pre", 3);
    int rv = render(t, 99, &a, &missing);
    FUZZ_CHECK(rv == 0 || rv == LC_ENOTFOUND, "render returned %d", rv);
    if (rv == LC_ENOTFOUND) {
        FUZZ_CHECK(a.len == 3 && memcmp(a.data, "pre", 4) == 0, "a failed render changed out");
        FUZZ_CHECK(missing != NULL && strcmp(missing, "u") == 0, "missing is %s", missing);
    } else {
        FUZZ_CHECK(render(t, 99, &b, NULL) == 0, "a second render failed");
        FUZZ_CHECK(a.len == b.len + 3 && memcmp(a.data + 3, b.data ? b.data : "", b.len) == 0,
                   "the same generator state rendered different bytes");
        if (mode == LC_TPL_JSON_STR)
            check_json_string_body(&b);
        if (mode == LC_TPL_FORM)
            check_form(&b);
        if (lc_tpl_is_expression(t))
            check_value(t, &b);
        if (!lc_tpl_dynamic(t) && memchr(src, '$', len) == NULL && mode == LC_TPL_RAW)
            FUZZ_CHECK(b.len == len && (len == 0 || memcmp(b.data, src, len) == 0),
                       "a literal template rendered other bytes");
    }
    lc_buf_free(&a);
    lc_buf_free(&b);
    lc_tpl_free(t);
}

static void fuzz_condition(const char *src, size_t len)
{
    lc_cond_t *c;
    char err[256];
    if (lc_cond_compile(&c, src, len, &names, err, sizeof err) != 0)
        return;
    int slots[LC_COND_NODES_MAX];
    size_t total = lc_cond_uses(c, NULL, 0);
    check_slots(slots, lc_cond_uses(c, slots, LC_COND_NODES_MAX), total);
    uint64_t rng1 = 5, rng2 = 5;
    const char *missing = NULL;
    lc_tpl_env_t env1 = env_with(&rng1, &missing), env2 = env_with(&rng2, NULL);
    bool out1 = false, out2 = false;
    int rv1 = lc_cond_eval(c, &env1, &out1), rv2 = lc_cond_eval(c, &env2, &out2);
    FUZZ_CHECK(rv1 == 0 || rv1 == LC_ENOTFOUND, "eval returned %d", rv1);
    FUZZ_CHECK(rv1 == rv2 && (rv1 != 0 || out1 == out2), "two evaluations differ");
    if (rv1 == LC_ENOTFOUND)
        FUZZ_CHECK(missing != NULL && strcmp(missing, "u") == 0, "missing is %s", missing);
    lc_cond_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    memset(long_value, 'L', sizeof long_value);
    long_value[100] = '"';
    const char *src = (const char *)data + 1;
    fuzz_template(src, size - 1, (lc_tpl_mode_t)(data[0] % 3));
    fuzz_condition(src, size - 1);
    return 0;
}
