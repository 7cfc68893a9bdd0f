/* fuzz_json_scan.c — lc_jpath_compile on the input's first bytes, lc_jpath_scan
 * over the rest. Properties: a scan returns 0 or LC_EINVAL; every match lies
 * inside the body (a string's quotes too) and decodes without overrunning;
 * and on a body jansson accepts (no duplicate keys, no raw NUL, nesting within our limit)
 * the scan succeeds and selects exactly the values the path selects in
 * jansson's tree, in the same order. Input: byte 0 is the path's length n,
 * bytes 1..n the path (when it does not compile, byte 0 picks a fixed one),
 * the rest the body. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "lc_json_scan.h"
#include "lc_json_scan_internal.h" /* the oracle walks the compiled segments */

#define MAX_MATCHES 512

static const char *const fallback_paths[] = {"$", "$[*]", "$.a", "$[-1]", "$.*.*", "$[0].b[*]",
                                             "$['k'][-2][*]", "$[*][*][0]"};

typedef struct matches_s {
    const uint8_t *body;
    size_t len;
    lc_jmatch_t m[MAX_MATCHES];
    size_t n;
    bool overflow;
} matches_t;

/* Checks what the scanner promises of each match, keeps it for the oracle. */
static bool check_match_cb(void *ctx, const lc_jmatch_t *m)
{
    matches_t *ms = ctx;
    const char *body = (const char *)ms->body;
    FUZZ_CHECK(m->v.data >= body && m->v.len <= ms->len &&
                   (size_t)(m->v.data - body) <= ms->len - m->v.len,
               "match at %p+%zu outside the body %p+%zu", (const void *)m->v.data, m->v.len,
               (const void *)body, ms->len);
    if (m->v.type == LC_V_STRING) {
        size_t end = (size_t)(m->v.data - body) + m->v.len;
        FUZZ_CHECK(m->v.data > body && m->v.data[-1] == '"' && end < ms->len && body[end] == '"',
                   "a string match without its quotes in the body");
        FUZZ_CHECK(m->escaped == (memchr(m->v.data, '\\', m->v.len) != NULL),
                   "escaped is %d for a string %s a backslash", m->escaped,
                   m->escaped ? "without" : "with");
        lc_buf_t out = {0};
        int rv = lc_json_string_decode(m->v.data, m->v.len, &out);
        FUZZ_CHECK(rv == 0 || rv == LC_EINVAL, "decode returned %d", rv);
        FUZZ_CHECK(out.len <= m->v.len, "decoded %zu bytes from %zu", out.len, m->v.len);
        lc_buf_free(&out);
    } else {
        FUZZ_CHECK(m->v.len > 0 && !m->escaped, "an empty or escaped non-string match");
    }
    if (ms->n == MAX_MATCHES) {
        ms->overflow = true;
        return false;
    }
    ms->m[ms->n++] = *m;
    return true;
}

/* The oracle --------------------------------------------------------------- */

typedef struct selected_s {
    json_t *v[MAX_MATCHES];
    size_t n;
    bool overflow;
} selected_t;

static void select_in_tree(const lc_jpath_t *p, size_t i, json_t *v, selected_t *out)
{
    if (i == p->nseg) {
        if (out->n == MAX_MATCHES)
            out->overflow = true;
        else
            out->v[out->n++] = v;
        return;
    }
    const jpath_seg_t *seg = &p->seg[i];
    if (seg->kind == SEG_NAME) {
        json_t *member = json_is_object(v) ? json_object_getn(v, seg->name, seg->name_len) : NULL;
        if (member != NULL)
            select_in_tree(p, i + 1, member, out);
    } else if (seg->kind == SEG_INDEX) {
        int64_t size = json_is_array(v) ? (int64_t)json_array_size(v) : 0;
        int64_t at = seg->index < 0 ? size + seg->index : seg->index;
        if (at >= 0 && at < size)
            select_in_tree(p, i + 1, json_array_get(v, (size_t)at), out);
    } else if (json_is_array(v)) {
        for (size_t k = 0; k < json_array_size(v); k++)
            select_in_tree(p, i + 1, json_array_get(v, k), out);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *member;
        json_object_foreach(v, key, member)
            select_in_tree(p, i + 1, member, out);
    }
}

static int tree_depth(json_t *v)
{
    int deepest = 0;
    if (json_is_array(v)) {
        for (size_t k = 0; k < json_array_size(v); k++) {
            int d = tree_depth(json_array_get(v, k));
            deepest = d > deepest ? d : deepest;
        }
        return deepest + 1;
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *member;
        json_object_foreach(v, key, member) {
            int d = tree_depth(member);
            deepest = d > deepest ? d : deepest;
        }
        return deepest + 1;
    }
    return 0;
}

/* Whether the scanner's match m is the value want of jansson's tree. */
static bool same_value(const lc_jmatch_t *m, json_t *want)
{
    if (json_is_string(want)) {
        lc_buf_t out = {0};
        bool same = m->v.type == LC_V_STRING &&
                    lc_json_string_decode(m->v.data, m->v.len, &out) == 0 &&
                    out.len == json_string_length(want) &&
                    memcmp(out.data ? out.data : "", json_string_value(want), out.len) == 0;
        lc_buf_free(&out);
        return same;
    }
    uint8_t type = json_is_number(want) ? LC_V_NUMBER : json_is_boolean(want) ? LC_V_BOOL :
                   json_is_null(want) ? LC_V_NULL : LC_V_JSON;
    if (m->v.type != type)
        return false;
    json_t *got = json_loadb(m->v.data, m->v.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    bool same = got != NULL && json_equal(got, want);
    json_decref(got);
    return same;
}

static void check_against_jansson(const lc_jpath_t *p, const uint8_t *body, size_t len, int rv,
                                  const matches_t *ms)
{
    /* jansson takes a raw NUL for the end of its input; JSON has no raw NULs. */
    if (memchr(body, '\0', len) != NULL)
        return;
    json_t *root = json_loadb((const char *)body, len,
                              JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, NULL);
    if (root == NULL || tree_depth(root) > LC_JSON_MAX_DEPTH || ms->overflow) {
        json_decref(root);
        return;
    }
    FUZZ_CHECK(rv == 0, "a body jansson accepts was refused (%d)", rv);
    selected_t *want = calloc(1, sizeof *want);
    if (want == NULL)
        abort();
    select_in_tree(p, 0, root, want);
    if (!want->overflow) {
        FUZZ_CHECK(ms->n == want->n, "%zu matches, jansson's tree has %zu", ms->n, want->n);
        for (size_t i = 0; i < ms->n; i++)
            FUZZ_CHECK(same_value(&ms->m[i], want->v[i]), "match %zu (%.*s) is not jansson's", i,
                       (int)ms->m[i].v.len, ms->m[i].v.data);
    }
    free(want);
    json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t path_len = data[0] < size - 1 ? data[0] : size - 1;
    char *src = fuzz_strndup(data + 1, path_len);
    matches_t *ms = calloc(1, sizeof *ms);
    if (src == NULL || ms == NULL)
        abort();
    lc_jpath_t *p = NULL;
    char err[256];
    if (lc_jpath_compile(&p, src, err, sizeof err) != 0) {
        FUZZ_CHECK(p == NULL && strlen(err) > 0, "a failed compile left a path or no message");
        size_t n_fallbacks = sizeof fallback_paths / sizeof fallback_paths[0];
        const char *fallback = fallback_paths[data[0] % n_fallbacks];
        FUZZ_CHECK(lc_jpath_compile(&p, fallback, err, sizeof err) == 0, "%s: %s", fallback, err);
    }
    /* The body in a buffer of its exact size, so that a read past it is caught. */
    size_t len = size - 1 - path_len;
    uint8_t *body = malloc(len ? len : 1);
    if (body == NULL)
        abort();
    memcpy(body, data + 1 + path_len, len);
    ms->body = body;
    ms->len = len;
    int rv = lc_jpath_scan(p, (const char *)body, len, check_match_cb, ms);
    FUZZ_CHECK(rv == 0 || rv == LC_EINVAL, "scan returned %d", rv);
    check_against_jansson(p, body, len, rv, ms);
    lc_jpath_free(p);
    free(body);
    free(ms);
    free(src);
    return 0;
}
