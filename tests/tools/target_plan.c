/* target_plan.c — what lc_target answers to a request, whichever protocol carried it: the
 * control paths, the app's routes, and the plain answer with its per-request overrides and
 * its delay (--latency-ms, jitter, the stall). */
#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <uv.h>

#include "target.h"

bool parse_digits(const char *s, size_t n, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;
    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    *out = v;
    return v <= max;
}

static bool param_is(const char *p, size_t n, const char *name, const char **val, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || memcmp(p, name, k) != 0 || p[k] != '=')
        return false;
    *val = p + k + 1;
    *vlen = n - k - 1;
    return true;
}

/* ?rst=1 resets with INTERNAL_ERROR, ?rst=refused with REFUSED_STREAM; false for another value. */
static bool rst_value(const char *v, size_t n, uint8_t *out)
{
    if (n == 1 && v[0] == '1')
        *out = RST_INTERNAL;
    else if (n == 7 && memcmp(v, "refused", 7) == 0)
        *out = RST_REFUSED;
    else
        return false;
    return true;
}

/* Applies ?status= ?latency_ms= ?close=1 ?size= ?rst=; returns false when a value is invalid. */
static bool apply_query(resp_t *r, long *latency, const char *q, size_t len)
{
    while (len > 0) {
        const char *amp = memchr(q, '&', len), *v;
        size_t n = amp ? (size_t)(amp - q) : len, vlen;
        unsigned long x;
        if (param_is(q, n, "status", &v, &vlen)) {
            if (!parse_digits(v, vlen, 599, &x) || x < 200)
                return false;
            r->status = (int)x;
        } else if (param_is(q, n, "latency_ms", &v, &vlen)) {
            if (!parse_digits(v, vlen, LATENCY_MAX_MS, &x))
                return false;
            *latency = (long)x;
        } else if (param_is(q, n, "size", &v, &vlen)) {
            if (!parse_digits(v, vlen, RESP_SIZE_MAX, &x))
                return false;
            r->size = x;
        } else if (param_is(q, n, "close", &v, &vlen) && vlen == 1 && v[0] == '1') {
            r->conn_hdr = CONN_HDR_CLOSE;
        } else if (param_is(q, n, "rst", &v, &vlen) && !rst_value(v, vlen, &r->rst)) {
            return false;
        }
        q += amp ? n + 1 : n;
        len -= amp ? n + 1 : n;
    }
    return true;
}

static uint64_t next_rand(engine_t *e)
{
    e->rng ^= e->rng >> 12;
    e->rng ^= e->rng << 25;
    e->rng ^= e->rng >> 27;
    return e->rng * 2685821657736338717ull;
}

uint64_t plan_due_time(engine_t *e, long latency_override)
{
    const config_t *cfg = &e->t->cfg;
    if (latency_override < 0 && cfg->latency_ms == 0 && cfg->jitter_ms == 0 && cfg->stall_ms == 0)
        return 0;
    uint64_t now = uv_hrtime(), ms;
    if (latency_override >= 0)
        ms = (uint64_t)latency_override;
    else
        ms = cfg->latency_ms + (cfg->jitter_ms ? next_rand(e) % (cfg->jitter_ms + 1) : 0);
    uint64_t due = now + ms * NS_PER_MS;
    if (cfg->stall_ms > 0) {
        uint64_t t0 = 0;
        if (!atomic_compare_exchange_strong(&e->t->first_ns, &t0, now) && t0 != 0)
            now = t0;
        uint64_t from = now + cfg->stall_at_ms * NS_PER_MS, until = from + cfg->stall_ms * NS_PER_MS;
        if (due >= from && due < until)
            due = until;
    }
    return due;
}

void plan_request(engine_t *e, int method, int route, const char *url, size_t url_len,
                  resp_t *r, uint64_t *due_ns)
{
    assert(url_len == 0 || url != NULL);
    const char *q = memchr(url, '?', url_len);
    size_t plen = q ? (size_t)(q - url) : url_len;
    long latency = -1;
    unsigned long code;
    r->kind = RESP_PLAIN;
    r->counted = true;
    r->rst = RST_NONE;
    r->status = (int)e->t->cfg.status;
    r->size = e->t->cfg.body_size;
    r->slot = -1;
    if (stats_control_request(r, url, plen, method)) {
        *due_ns = 0;
        return;
    }
    if (route != APP_NONE) {
        r->kind = RESP_APP;
        *due_ns = plan_due_time(e, -1);
        return;
    }
    if (plen > 8 && memcmp(url, "/status/", 8) == 0 &&
        parse_digits(url + 8, plen - 8, 599, &code) && code >= 200)
        r->status = (int)code;
    if (q != NULL && !apply_query(r, &latency, q + 1, url_len - plen - 1))
        r->status = 400, r->size = 0, r->rst = RST_NONE, latency = 0;
    r->slot = stats_path_slot(e->t, url, plen);
    *due_ns = plan_due_time(e, latency);
}
