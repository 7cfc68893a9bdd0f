/* lc_url_ref.c — relative references resolved against a request's path (RFC 3986 5.2). */
#include "lc_url_ref.h"

#include <assert.h>
#include <string.h>

bool lc_url_ref_is_relative(const char *ref, size_t len)
{
    if (len > 0 && ref[0] == '/')
        return false; /* "/path" or "//host" */
    for (size_t i = 0; i < len; i++) {
        char c = ref[i];
        if (c == ':')
            return false; /* "scheme:" before any '/', '?' or '#' */
        if (c == '/' || c == '?' || c == '#')
            break;
    }
    return true;
}

typedef struct out_s {
    char *at;
    size_t len, cap;
} out_t;

static bool put(out_t *o, const char *s, size_t n)
{
    if (n >= o->cap - o->len)
        return false;
    memcpy(o->at + o->len, s, n);
    o->len += n;
    o->at[o->len] = '\0';
    return true;
}

/* Appends path (starting with '/') to o without its "." and ".." segments (5.2.4): a ".."
 * drops the segment before it, never above the root; a final "." or ".." leaves a '/'. */
static bool put_without_dots(out_t *o, const char *path, size_t len)
{
    assert(len > 0 && path[0] == '/');
    size_t root = o->len;
    size_t i = 1;
    if (!put(o, "/", 1))
        return false;
    while (i <= len) {
        size_t end = i;
        while (end < len && path[end] != '/')
            end++;
        size_t n = end - i;
        bool last = end >= len;
        if (n == 1 && path[i] == '.') {
            /* nothing: a final "." leaves the '/' already written */
        } else if (n == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (o->len > root + 1) { /* drop "seg/" back to the '/' before it */
                o->len--;
                while (o->len > root + 1 && o->at[o->len - 1] != '/')
                    o->len--;
                o->at[o->len] = '\0';
            }
        } else if (!put(o, path + i, n) || (!last && !put(o, "/", 1))) {
            return false;
        }
        i = end + 1;
    }
    return true;
}

bool lc_url_ref_resolve(const char *base_path, const char *ref, size_t len, char *out, size_t cap)
{
    assert(base_path != NULL && base_path[0] == '/' && cap > 0);
    const char *hash = memchr(ref, '#', len);
    if (hash != NULL)
        len = (size_t)(hash - ref);
    const char *q = memchr(ref, '?', len);
    size_t plen = q != NULL ? (size_t)(q - ref) : len;
    out_t o = {out, 0, cap};
    out[0] = '\0';
    char merged[2048];
    out_t m = {merged, 0, sizeof merged};
    bool ok;
    if (plen > 0 && ref[0] == '/') {
        ok = put(&m, ref, plen);
    } else if (plen == 0) { /* "?q" or "": the same path */
        ok = put(&m, base_path, strlen(base_path));
    } else {
        const char *slash = strrchr(base_path, '/'); /* the base's directory, with its '/' */
        ok = put(&m, base_path, (size_t)(slash - base_path) + 1) && put(&m, ref, plen);
    }
    return ok && put_without_dots(&o, merged, m.len) && put(&o, ref + plen, len - plen);
}
