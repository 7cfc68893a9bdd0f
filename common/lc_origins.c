/* lc_origins.c — "target" and "targets": parsed, validated, and matched against URLs. */
#include "lc_origins.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"
#include "lc_url_ref.h"

#define ORIGIN_URL_MAX 2048u

static bool same_origin(const lc_url_t *a, const lc_url_t *b)
{
    return a->tls == b->tls && a->hp.port == b->hp.port && strcasecmp(a->hp.host, b->hp.host) == 0;
}

static bool name_ok(const char *name)
{
    size_t len = strlen(name);
    return len > 0 && len <= LC_ORIGIN_NAME_MAX &&
           strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

/* targets.<name>: one origin URL, not an alias of one already listed. */
static int parse_one(lc_jp_t *p, const char *name, json_t *v, lc_origins_t *o)
{
    char sub[256], where[LC_JSON_PATH_MAX], text[LC_ORIGIN_TEXT_MAX];
    lc_origin_t *at = &o->at[o->n];
    int rv = lc_jp_controls(p, "targets", NULL, "name: ", name, strlen(name));
    if (rv != 0)
        return rv;
    if (!name_ok(name))
        return lc_jp_fail(p, "targets", NULL, "'%.64s': a name is 1 to %u of a-z, 0-9, '_' and '-'",
                          name, LC_ORIGIN_NAME_MAX);
    if (strcmp(name, LC_ORIGIN_DEFAULT) == 0)
        return lc_jp_fail(p, "targets", name, "\"%s\" is the name of target", LC_ORIGIN_DEFAULT);
    snprintf(where, sizeof where, "targets.%s", name);
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > ORIGIN_URL_MAX)
        return lc_jp_fail(p, where, NULL, "expected a URL like \"https://api.example\"");
    const char *url = json_string_value(v);
    if ((rv = lc_jp_controls(p, where, NULL, "", url, strlen(url))) != 0)
        return rv;
    if (lc_url_parse(url, &at->url, sub, sizeof sub) != 0)
        return lc_jp_fail(p, where, NULL, "%s", sub);
    if (at->url.base_path[0] != '\0')
        return lc_jp_fail(p, where, NULL, "expected an origin (scheme://host[:port]), without the "
                          "path %.64s (steps give their paths)", at->url.base_path);
    for (size_t i = 0; i < o->n; i++)
        if (same_origin(&o->at[i].url, &at->url)) {
            lc_origin_format(&at->url, text, sizeof text);
            return lc_jp_fail(p, where, NULL, "%s is already listed as %s%s", text,
                              i == 0 ? "target" : "targets.", i == 0 ? "" : o->at[i].name);
        }
    if ((rv = lc_jp_dup(p, name, &at->name)) != 0)
        return rv;
    o->n++;
    return 0;
}

int lc_origins_parse(lc_jp_t *p, json_t *root, const lc_url_t *target, lc_origins_t *out)
{
    json_t *targets, *v;
    const char *name;
    assert(target != NULL && out != NULL);
    memset(out, 0, sizeof *out);
    int rv = lc_jp_object(p, root, "", "targets", &targets);
    if (rv != 0)
        return rv;
    size_t n = targets != NULL ? json_object_size(targets) : 0;
    if (n > LC_TARGETS_MAX)
        return lc_jp_fail(p, "", "targets", "at most %u origins beside target", LC_TARGETS_MAX);
    if ((out->at = calloc(n + 1, sizeof *out->at)) == NULL)
        return lc_jp_oom(p);
    out->at[0].url = *target;
    if ((rv = lc_jp_dup(p, LC_ORIGIN_DEFAULT, &out->at[0].name)) != 0)
        return rv;
    out->n = 1;
    if (targets == NULL)
        return 0;
    json_object_foreach(targets, name, v) {
        if ((rv = parse_one(p, name, v, out)) != 0)
            return rv;
    }
    return 0;
}

void lc_origins_free(lc_origins_t *o)
{
    if (o == NULL)
        return;
    for (size_t i = 0; o->at != NULL && i < o->n; i++)
        free(o->at[i].name);
    free(o->at);
    memset(o, 0, sizeof *o);
}

int lc_origins_find(const lc_origins_t *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->at[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool lc_origin_is_absolute(const char *url, size_t len)
{
    return (len >= 7 && strncasecmp(url, "http://", 7) == 0) ||
           (len >= 8 && strncasecmp(url, "https://", 8) == 0);
}

/* The authority of an absolute http(s) URL parsed into *tls and *hp; *rest after it. */
static bool parse_authority(const char *url, size_t len, bool *tls, lc_hostport_t *hp,
                            size_t *rest)
{
    char auth[LC_HOST_MAX + 16], sub[128];
    if (!lc_origin_is_absolute(url, len))
        return false;
    *tls = url[4] == 's' || url[4] == 'S';
    size_t from = *tls ? 8 : 7, end = from;
    while (end < len && url[end] != '/' && url[end] != '?' && url[end] != '#')
        end++;
    size_t alen = end - from;
    if (alen == 0 || alen >= sizeof auth || memchr(url + from, '@', alen) != NULL)
        return false; /* no host, too long, or user information (never ours to send) */
    memcpy(auth, url + from, alen);
    auth[alen] = '\0';
    if (lc_hostport_parse(auth, *tls ? 443 : 80, hp, sub, sizeof sub) != 0)
        return false;
    *rest = end;
    return true;
}

int lc_origins_match(const lc_origins_t *o, const char *url, size_t len, size_t *rest)
{
    lc_url_t u = {0};
    size_t at;
    if (!parse_authority(url, len, &u.tls, &u.hp, &at))
        return -1;
    for (size_t i = 0; i < o->n; i++)
        if (same_origin(&u, &o->at[i].url)) {
            *rest = at;
            return (int)i;
        }
    return -1;
}

/* "//host[:port]…": the origin of the authority, with cur's scheme; *rest after it. */
static int network_path(const lc_origins_t *o, unsigned cur, const char *loc, size_t len,
                        size_t *rest)
{
    char abs[LC_HOST_MAX + 32];
    size_t end = 2, at;
    while (end < len && loc[end] != '/' && loc[end] != '?' && loc[end] != '#')
        end++;
    if (end + 8 >= sizeof abs)
        return -1;
    snprintf(abs, sizeof abs, "%s:%.*s", o->at[cur].url.tls ? "https" : "http", (int)end, loc);
    int origin = lc_origins_match(o, abs, strlen(abs), &at);
    *rest = end;
    return origin;
}

int lc_origins_locate(const lc_origins_t *o, unsigned cur, const char *base, const char *loc,
                      size_t len, char *out, size_t cap)
{
    assert(cur < o->n && cap > 0);
    int origin = (int)cur;
    size_t rest = 0;
    if (len == 0)
        return -1;
    if (len >= 2 && loc[0] == '/' && loc[1] == '/')
        origin = network_path(o, cur, loc, len, &rest);
    else if (lc_origin_is_absolute(loc, len))
        origin = lc_origins_match(o, loc, len, &rest);
    else if (loc[0] != '/' && !lc_url_ref_is_relative(loc, len))
        return -1; /* another scheme ("mailto:", "ftp://…") */
    else if (loc[0] != '/' && base == NULL)
        return -1; /* relative to nothing */
    if (origin < 0)
        return -1;
    /* After an authority the path starts at the root: "" is "/", "?q" is "/?q". */
    const char *from = rest > 0 ? "/" : base != NULL ? base : "/";
    return lc_url_ref_resolve(from, loc + rest, len - rest, out, cap) ? origin : -1;
}

void lc_origin_format(const lc_url_t *u, char *buf, size_t cap)
{
    bool v6 = strchr(u->hp.host, ':') != NULL;
    snprintf(buf, cap, "%s://%s%s%s:%u", u->tls ? "https" : "http", v6 ? "[" : "", u->hp.host,
             v6 ? "]" : "", u->hp.port);
}
