/* target_stats.c — lc_target's per-path counter table, its /__stats JSON and /__reset. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <llhttp.h>

#include "target.h"

int stats_path_slot(target_t *t, const char *path, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    char *fresh = NULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)path[i]) * 16777619u;
    for (size_t i = 0; i < PATH_SLOTS; i++) {
        size_t idx = (h + i) & (PATH_SLOTS - 1);
        char *k = atomic_load_explicit(&t->path_keys[idx], memory_order_acquire);
        if (k == NULL) {
            if (fresh == NULL) {
                if (atomic_fetch_add(&t->path_count, 1) >= PATHS_MAX ||
                    (fresh = strndup(path, len)) == NULL) {
                    atomic_fetch_sub(&t->path_count, 1);
                    return -1;
                }
            }
            if (atomic_compare_exchange_strong(&t->path_keys[idx], &k, fresh))
                return (int)idx;
        }
        if (strncmp(k, path, len) == 0 && k[len] == '\0') {
            if (fresh != NULL) {
                free(fresh);
                atomic_fetch_sub(&t->path_count, 1);
            }
            return (int)idx;
        }
    }
    free(fresh);
    return -1;
}

static uint64_t sum(target_t *t, size_t offset)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < t->nengines; i++)
        total += atomic_load_explicit(
            (atomic_uint_fast64_t *)((char *)t->engines[i] + offset), RELAXED);
    return total;
}

#define SUM(t, field) sum((t), offsetof(engine_t, field))

/* --http2: connections that spoke it, request streams, GOAWAYs sent, streams reset (?rst=1)
 * and refused (?rst=refused, or past --h2-goaway-after). */
static json_t *h2_json(target_t *t)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "connections_total", (json_int_t)SUM(t, h2_conns),
                     "streams", (json_int_t)SUM(t, h2_streams),
                     "goaways", (json_int_t)SUM(t, h2_goaways),
                     "reset", (json_int_t)SUM(t, h2_reset),
                     "refused", (json_int_t)SUM(t, h2_refused));
}

char *stats_json(target_t *t)
{
    json_t *by = json_object();
    uint64_t other = SUM(t, other), requests = other;
    for (size_t s = 0; s < PATH_SLOTS; s++) {
        char *k = atomic_load_explicit(&t->path_keys[s], memory_order_acquire);
        uint64_t n = k ? sum(t, offsetof(engine_t, by_path) + s * sizeof(atomic_uint_fast64_t)) : 0;
        requests += n;
        if (n > 0 && json_object_set_new(by, k, json_integer((json_int_t)n)) != 0)
            other += n; /* a key that is not valid UTF-8 */
    }
    if (other > 0)
        json_object_set_new(by, "(other)", json_integer((json_int_t)other));
    json_t *root = json_pack("{s:I, s:o, s:I, s:I, s:I, s:I}",
                             "requests", (json_int_t)requests, "by_path", by,
                             "bytes_in", (json_int_t)SUM(t, bytes_in),
                             "connections", (json_int_t)SUM(t, conns_now),
                             "connections_total", (json_int_t)SUM(t, conns_total),
                             "rejected", (json_int_t)SUM(t, rejected));
    if (root != NULL && t->cfg.http2)
        json_object_set_new(root, "h2", h2_json(t));
    char *text = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}

void stats_reset(target_t *t)
{
    for (unsigned i = 0; i < t->nengines; i++) {
        engine_t *e = t->engines[i];
        atomic_store(&e->bytes_in, 0);
        atomic_store(&e->rejected, 0);
        atomic_store(&e->conns_total, 0);
        atomic_store(&e->other, 0);
        atomic_store(&e->h2_conns, 0);
        atomic_store(&e->h2_streams, 0);
        atomic_store(&e->h2_goaways, 0);
        atomic_store(&e->h2_reset, 0);
        atomic_store(&e->h2_refused, 0);
        for (size_t s = 0; s < PATH_SLOTS; s++)
            atomic_store_explicit(&e->by_path[s], 0, RELAXED);
    }
    atomic_store(&t->first_ns, 0);
}

static bool path_eq(const char *path, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(path, lit, len) == 0;
}

bool stats_control_request(resp_t *r, const char *path, size_t len, int method)
{
    bool stats = path_eq(path, len, "/__stats"), reset = path_eq(path, len, "/__reset");
    if (!stats && !reset)
        return false;
    r->counted = false;
    if (stats && (method == HTTP_GET || method == HTTP_HEAD))
        r->kind = RESP_STATS;
    else if (reset && method == HTTP_POST)
        r->kind = RESP_RESET;
    else
        r->status = 405, r->size = 0;
    return true;
}

void stats_free(target_t *t)
{
    for (size_t s = 0; s < PATH_SLOTS; s++)
        free(atomic_load(&t->path_keys[s]));
}
