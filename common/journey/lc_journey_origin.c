/* lc_journey_origin.c — which origin a request step goes to: its "origin" (a name of the
 * scenario's target or targets) or the origin of its absolute URL, which must be listed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_journey_internal.h"

#define ORIGIN_LIST_MAX 400 /* characters of the names listed in an error */

/* "default, api, auth" into out. */
static void list_names(const lc_origins_t *o, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < o->n && len < cap; i++) {
        int n = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", o->at[i].name);
        len += n > 0 ? (size_t)n : 0;
    }
}

/* "origin": a listed name into *index. */
static int named_origin(jc_t *c, json_t *step, const char *path, int *index)
{
    char names[ORIGIN_LIST_MAX];
    json_t *v = json_object_get(step, "origin");
    *index = -1;
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return lc_jp_fail(&c->jp, path, "origin", "expected the name of target (\"%s\") or of one "
                          "of targets", LC_ORIGIN_DEFAULT);
    *index = lc_origins_find(c->origins, json_string_value(v));
    if (*index >= 0)
        return 0;
    list_names(c->origins, names, sizeof names);
    return lc_jp_fail(&c->jp, path, "origin", "no origin named \"%.64s\" (listed: %s)",
                      json_string_value(v), names);
}

/* An absolute URL's origin, which must be listed and written out (no template), into *index;
 * *rest: where its path begins. */
static int url_origin(jc_t *c, const char *url, size_t len, const char *path, int *index,
                      size_t *rest)
{
    char names[ORIGIN_LIST_MAX];
    size_t end = 8;
    while (end < len && url[end] != '/' && url[end] != '?' && url[end] != '#')
        end++;
    if (memmem(url, end, "${", 2) != NULL)
        return lc_jp_fail(&c->jp, path, "path", "the origin of an absolute URL cannot be a "
                          "template (name a listed one with \"origin\" and give a path)");
    *index = lc_origins_match(c->origins, url, len, rest);
    if (*index >= 0)
        return 0;
    list_names(c->origins, names, sizeof names);
    return lc_jp_fail(&c->jp, path, "path", "%.*s is not an origin of target or targets (listed: "
                      "%s); add it to targets", (int)(end < 200 ? end : 200), url, names);
}

/* The step's default name on another origin than target: "<METHOD> <origin>:<path>". */
static int name_on_origin(jc_t *c, json_t *view, const char *origin, const char *rest)
{
    json_t *m = json_object_get(view, "method");
    const char *method = json_is_string(m) ? json_string_value(m) : "GET";
    size_t len = strlen(method) + strlen(origin) + strlen(rest) + 3;
    char *name = malloc(len);
    if (name == NULL)
        return lc_jp_oom(&c->jp);
    snprintf(name, len, "%s %s:%s", method, origin, rest);
    int rv = json_object_set_new(view, "name", json_string(name)) == 0 ? 0 : lc_jp_oom(&c->jp);
    free(name);
    return rv;
}

int jc_request_origin(jc_t *c, json_t *view, const char *path, lc_jreq_t *r)
{
    json_t *p = json_object_get(view, "path");
    const char *url = json_is_string(p) ? json_string_value(p) : "";
    size_t len = json_is_string(p) ? json_string_length(p) : 0, rest = 0;
    int named, from_url = -1;
    int rv = named_origin(c, view, path, &named);
    if (rv == 0 && lc_origin_is_absolute(url, len))
        rv = url_origin(c, url, len, path, &from_url, &rest);
    if (rv != 0)
        return rv;
    if (named >= 0 && from_url >= 0 && named != from_url)
        return lc_jp_fail(&c->jp, path, "origin", "\"%s\", but the path is a URL of %s",
                          c->origins->at[named].name, c->origins->at[from_url].name);
    int index = from_url >= 0 ? from_url : named >= 0 ? named : 0;
    r->origin = (uint8_t)index;
    r->absolute = from_url >= 0;
    if (from_url >= 0) { /* the path the URL holds: "/x?q", or "/" before a bare query */
        size_t keep = strcspn(url + rest, "#"), n = keep + 2; /* a fragment is never sent */
        char *own = malloc(n);
        if (own == NULL)
            return lc_jp_oom(&c->jp);
        snprintf(own, n, "%s%.*s", url[rest] == '/' ? "" : "/", (int)keep, url + rest);
        rv = json_object_set_new(view, "path", json_string(own)) == 0 ? 0 : lc_jp_oom(&c->jp);
        free(own);
        if (rv != 0)
            return rv;
    }
    p = json_object_get(view, "path");
    if (index == 0 || json_object_get(view, "name") != NULL || !json_is_string(p))
        return 0;
    return name_on_origin(c, view, c->origins->at[index].name, json_string_value(p));
}
