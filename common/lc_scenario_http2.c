/* lc_scenario_http2.c — a scenario's "http2": the protocol choice, and the shared per-engine
 * pool of multiplexed connections it may ask for (validated here; see lc_scenario.h). */
#include <assert.h>
#include <string.h>

#include "lc_err.h"
#include "lc_scenario.h"

#define MODE_EXPECTED "expected false, true or \"auto\" (or {\"mode\": …, \"pool\": {…}})"

/* A mode value: false, true or "auto"; -1 for anything else. */
static int mode_of(json_t *v)
{
    if (json_is_false(v))
        return LC_HTTP2_OFF;
    if (json_is_true(v))
        return LC_HTTP2_ON;
    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0)
        return LC_HTTP2_AUTO;
    return -1;
}

/* "pool": {"connections": C, "max_streams": M}: C is required, M defaults. */
static int parse_pool(lc_jp_t *p, json_t *pool, lc_scenario_t *s)
{
    static const char *const fields[] = {"connections", "max_streams", NULL};
    int rv;
    if (!json_is_object(pool))
        return lc_jp_fail(p, "http2", "pool",
                          "expected {\"connections\": n, \"max_streams\": m}");
    if ((rv = lc_jp_fields(p, pool, "http2.pool", fields)) != 0)
        return rv;
    if (json_object_get(pool, "connections") == NULL)
        return lc_jp_fail(p, "http2.pool", "connections", "required");
    s->h2_pool.max_streams = LC_H2_POOL_STREAMS_DEFAULT;
    if ((rv = lc_jp_uint(p, pool, "http2.pool", "connections", 1, LC_H2_POOL_CONNS_MAX,
                         &s->h2_pool.connections)) != 0)
        return rv;
    return lc_jp_uint(p, pool, "http2.pool", "max_streams", 1, LC_H2_POOL_STREAMS_MAX,
                      &s->h2_pool.max_streams);
}

/* {"mode": true | "auto", "pool": {…}}: a pool is HTTP/2's, so mode false is refused. */
static int parse_object(lc_jp_t *p, json_t *v, lc_scenario_t *s)
{
    static const char *const fields[] = {"mode", "pool", NULL};
    int rv = lc_jp_fields(p, v, "http2", fields);
    if (rv != 0)
        return rv;
    json_t *mode = json_object_get(v, "mode");
    if (mode == NULL)
        return lc_jp_fail(p, "http2", "mode", "required (true or \"auto\")");
    int m = mode_of(mode);
    if (m != LC_HTTP2_ON && m != LC_HTTP2_AUTO)
        return lc_jp_fail(p, "http2", "mode", "expected true or \"auto\"");
    s->http2 = (enum lc_http2)m;
    json_t *pool = json_object_get(v, "pool");
    return pool != NULL ? parse_pool(p, pool, s) : 0;
}

/* What a pool may be used with, once its members are valid. */
static int check_pool(lc_jp_t *p, const lc_scenario_t *s)
{
    if (s->h2_pool.connections == 0)
        return 0;
    if (s->http2 != LC_HTTP2_ON)
        return lc_jp_fail(p, "http2", "mode", "must be true with a pool (its connections "
                                              "speak HTTP/2 only, h2c or ALPN h2)");
    return 0;
}

int lc_scenario_parse_http2(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    assert(p != NULL && root != NULL && s != NULL);
    json_t *v = json_object_get(root, "http2");
    s->http2 = LC_HTTP2_OFF;
    memset(&s->h2_pool, 0, sizeof s->h2_pool);
    if (v == NULL)
        return 0;
    if (json_is_object(v)) {
        int rv = parse_object(p, v, s);
        return rv != 0 ? rv : check_pool(p, s);
    }
    int m = mode_of(v);
    if (m < 0)
        return lc_jp_fail(p, "", "http2", MODE_EXPECTED);
    s->http2 = (enum lc_http2)m;
    return 0;
}
