/* lc_codings.c — the scenario's "compression" list and its Accept-Encoding line. */
#include "lc_codings.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {NULL, "gzip", "deflate", "br"};

static int coding_of(const char *s)
{
    for (int i = LC_CODING_GZIP; i <= LC_CODING_BR; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return 0;
}

int lc_codings_parse(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                     lc_codings_t *out)
{
    char path[LC_JSON_PATH_MAX];
    json_t *v = json_object_get(obj, key);
    lc_codings_t c = {0};
    if (v == NULL)
        return 0;
    if (!json_is_array(v) || json_array_size(v) > LC_CODINGS_MAX)
        return lc_jp_fail(p, parent, key, "expected an array of content codings: some of "
                                          "\"gzip\", \"deflate\", \"br\" ([] for none)");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        int coding = json_is_string(e) ? coding_of(json_string_value(e)) : 0;
        snprintf(path, sizeof path, "%s%s%s[%zu]", parent, parent[0] ? "." : "", key, i);
        if (coding == 0)
            return lc_jp_fail(p, path, NULL, "expected \"gzip\", \"deflate\" or \"br\"");
        if (memchr(c.list, coding, c.n) != NULL)
            return lc_jp_fail(p, path, NULL, "\"%s\" is given twice", names[coding]);
        c.list[c.n++] = (uint8_t)coding;
    }
    *out = c;
    return 0;
}

size_t lc_codings_header(const lc_codings_t *c, char buf[LC_CODINGS_HEADER_MAX])
{
    assert(c->n <= LC_CODINGS_MAX);
    size_t len = 0;
    buf[0] = '\0';
    if (c->n == 0)
        return 0;
    len += (size_t)snprintf(buf, LC_CODINGS_HEADER_MAX, "Accept-Encoding: ");
    for (size_t i = 0; i < c->n; i++) {
        assert(c->list[i] >= LC_CODING_GZIP && c->list[i] <= LC_CODING_BR);
        len += (size_t)snprintf(buf + len, LC_CODINGS_HEADER_MAX - len, "%s%s", i ? ", " : "",
                                names[c->list[i]]);
    }
    len += (size_t)snprintf(buf + len, LC_CODINGS_HEADER_MAX - len, "\r\n");
    assert(len < LC_CODINGS_HEADER_MAX);
    return len;
}
