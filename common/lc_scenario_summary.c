/* lc_scenario_summary.c — the validation summary of a scenario and the idle-user memory estimate. */
#include "lc_scenario_summary.h"

#include <assert.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include <llhttp.h>
#include <uv.h>

#include "lc_buf.h"
#include "lc_threshold.h"
#include "lc_tpl.h"

/* worker_user_t and its worker_conn_t less the handles, requests, parser and
 * buffer counted by sizeof below: their pointers, counters, flags and
 * padding (x86-64 and aarch64). test_lc_scenario_summary.c compares the sum
 * with sizeof(worker_user_t): change this when the worker's structs change. */
#define USER_FIELDS_BYTES 288u
/* worker_journey_state_t (worker/user.h), worker_session_t and worker_slot_t
 * (worker/session.h); the unit test compares them with the worker's sizeofs. */
#define JOURNEY_STATE_BYTES 192u
#define SESSION_HEADER_BYTES 48u
#define SESSION_SLOT_BYTES 12u
/* worker_lua_user_t (worker/journey_lua_internal.h), allocated when a user first reaches a lua
 * step; test_journey_lua compares it with the worker's sizeof. */
#define LUA_USER_BYTES 72u
/* A scripted user's Lua heap, parked in sleep() in a lua step: its coroutine (lua_State and
 * stack), its u table (empty: u.id and u.iteration come through its metatable, u.vars' proxy
 * is made when a script first reads it), their registry slots, plus malloc's overhead on each
 * block. Measured by test_journey_lua over 2,000 users (sandbox allocator's bytes and blocks,
 * LuaJIT 2.1 GC64, glibc: ~620 B), which keeps this at or above what it measures; the
 * collector's pause of 100 keeps garbage to a few percent. */
#define LUA_PARKED_HEAP_BYTES 660u
/* glibc's malloc: an 8-byte header, chunks of 16-byte multiples, 32 at least. */
#define MALLOC_HEADER_BYTES 8u
#define MALLOC_ALIGN 16u
#define MALLOC_MIN_CHUNK 32u
/* libuv keeps a pointer per file descriptor in loop->watchers, an array it
 * grows to twice what it needs: up to two pointers per connection. */
#define LIBUV_FD_BYTES (2u * sizeof(void *))
/* lc_buf's first capacity; it doubles from there (lc_buf.c). */
/* An idle client TLS connection: once the handshake is done the worker takes its records over
 * from OpenSSL (worker/tls_record.h) and frees the SSL, so what stays is the connection's
 * tls_conn_t from the engine's slab (368 bytes; test_tls_conn checks the size and that OpenSSL
 * keeps nothing more, the engine's one session aside). A suite OpenSSL keeps (CBC) costs
 * ~17.6 KB instead. */
#define TLS_IDLE_CONN_BYTES 368u
/* An idle HTTP/2 session of a user's own: one page (worker/h2_session.c) holding worker_h2_t,
 * nghttp2 1.52's session struct (~2.9 KB) and its small blocks, carved there by
 * worker/h2_mem.c; its big blocks' pages went back or were never touched (it keeps no HPACK
 * table either way). test_h2_mem checks that an idle session holds nothing else. */
#define H2_IDLE_SESSION_BYTES 4096u

/* What malloc takes for a request of n bytes. */
static size_t malloc_chunk(size_t n)
{
    size_t chunk = (n + MALLOC_HEADER_BYTES + MALLOC_ALIGN - 1) & ~(size_t)(MALLOC_ALIGN - 1);
    return chunk < MALLOC_MIN_CHUNK ? MALLOC_MIN_CHUNK : chunk;
}

/* sizeof(worker_user_t), from the parts visible in common/. */
static size_t user_struct_bytes(void)
{
    return sizeof(uv_timer_t) /* think */ + sizeof(lc_buf_t) /* req */ +
           sizeof(uv_tcp_t) + sizeof(uv_timer_t) + sizeof(llhttp_t) + USER_FIELDS_BYTES;
}

void lc_scenario_idle_user_bytes(const lc_scenario_t *s, lc_idle_user_bytes_t *out)
{
    assert(s != NULL && out != NULL);
    memset(out, 0, sizeof *out);
    out->user = user_struct_bytes();
    out->allocator = malloc_chunk(out->user) - out->user;
    /* Through a shared HTTP/2 pool a user opens no connection: no fd, no TLS of its own; with
     * close_idle_target one idle past idle_timeout_ms has closed its connection. */
    bool connless = s->h2_pool.connections > 0 || s->close_idle_target;
    out->libuv = connless ? 0 : LIBUV_FD_BYTES;
    if (s->url.tls && !connless)
        out->tls = TLS_IDLE_CONN_BYTES;
    if (s->http2 != LC_HTTP2_OFF && s->h2_pool.connections == 0 && !s->close_idle_target)
        out->h2 = H2_IDLE_SESSION_BYTES;
    if (s->program != NULL)
        out->journey = malloc_chunk(JOURNEY_STATE_BYTES) +
                       malloc_chunk(SESSION_HEADER_BYTES + s->program->n_vars * SESSION_SLOT_BYTES +
                                    s->program->n_feeders * sizeof(uint32_t));
    if (s->program != NULL && s->program->n_luas > 0)
        out->lua = malloc_chunk(LUA_USER_BYTES) + LUA_PARKED_HEAP_BYTES;
    out->total = out->user + out->allocator + out->libuv + out->tls + out->h2 + out->journey +
                 out->lua;
}

size_t lc_scenario_h2_session_bytes(void)
{
    return H2_IDLE_SESSION_BYTES;
}

size_t lc_scenario_lua_user_struct_bytes(void)
{
    return LUA_USER_BYTES;
}

size_t lc_scenario_lua_parked_heap_bytes(void)
{
    return LUA_PARKED_HEAP_BYTES;
}

size_t lc_scenario_journey_state_bytes(void)
{
    return JOURNEY_STATE_BYTES;
}

size_t lc_scenario_session_bytes(size_t n_vars, size_t n_feeders)
{
    return SESSION_HEADER_BYTES + n_vars * SESSION_SLOT_BYTES + n_feeders * sizeof(uint32_t);
}

/* The first request step counted on endpoint e, or NULL (a lua step's). */
static const lc_jreq_t *request_of(const lc_program_t *p, size_t e)
{
    for (size_t i = 0; i < p->n_reqs; i++)
        if (p->reqs[i].endpoint == e)
            return &p->reqs[i];
    return NULL;
}

/* The lua step whose own endpoint e is, else the first lua step (one that lists e in its
 * "endpoints"), else NULL. */
static const lc_jlua_t *lua_of(const lc_program_t *p, size_t e)
{
    for (size_t i = 0; i < p->n_luas; i++)
        if (p->luas[i].endpoint == e)
            return &p->luas[i];
    return p->n_luas > 0 ? &p->luas[0] : NULL;
}

/* v2: each request name, with the first step's path template and its journey; a name only
 * lua steps count requests under has the path "(script)". */
static json_t *program_endpoints_json(const lc_program_t *p)
{
    json_t *list = json_array();
    for (size_t e = 0; list != NULL && e < p->n_endpoints; e++) {
        const lc_jreq_t *r = request_of(p, e);
        const lc_jlua_t *l = r == NULL ? lua_of(p, e) : NULL;
        json_t *row = json_pack("{s:s,s:s,s:s,s:s}", "name", p->endpoints[e].name, "method",
                                p->endpoints[e].method, "path",
                                r != NULL ? lc_tpl_source(r->path) : "(script)", "step",
                                r != NULL ? r->path_json : l != NULL ? l->path_json : "");
        if (json_array_append_new(list, row) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

static json_t *journeys_json(const lc_program_t *p)
{
    json_t *list = json_array();
    for (size_t j = 0; list != NULL && j < p->n_journeys; j++) {
        const lc_journey_t *jr = &p->journeys[j];
        size_t reqs = 0;
        for (size_t op = jr->on_start; op < p->n_ops && op <= jr->on_stop; op++)
            reqs += p->ops[op].code == LC_OP_REQ;
        for (size_t op = jr->on_stop; op < p->n_ops && p->ops[op].code != LC_OP_END; op++)
            reqs += p->ops[op].code == LC_OP_REQ;
        size_t luas = 0;
        for (size_t op = jr->on_start; op < p->n_ops && op <= jr->on_stop; op++)
            luas += p->ops[op].code == LC_OP_LUA;
        for (size_t op = jr->on_stop; op < p->n_ops && p->ops[op].code != LC_OP_END; op++)
            luas += p->ops[op].code == LC_OP_LUA;
        json_array_append_new(list, json_pack("{s:s,s:I,s:I,s:I,s:I}", "name", jr->name,
                                              "weight", (json_int_t)jr->weight, "pacing_ms",
                                              (json_int_t)jr->pacing_ms, "requests",
                                              (json_int_t)reqs, "lua_steps", (json_int_t)luas));
    }
    return list;
}

static json_t *variables_json(const lc_program_t *p)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < p->n_vars; i++)
        json_array_append_new(list, json_string(p->vars[i]));
    return list;
}

/* {"token": [{"by": "extract", "path": "journeys[0].on_start[0].extract.token"}],
 *  "acc.user": [{"by": "feeder", "path": "feeders.acc"}]}: every variable with the places the
 * dataflow check counts as setting it, then every feeder column. */
static json_t *variables_set_at_json(const lc_program_t *p)
{
    static const char *const kinds[] = {"set", "extract", "foreach", "lua"};
    json_t *all = json_object();
    for (size_t v = 0; all != NULL && v < p->n_vars; v++)
        json_object_set_new(all, p->vars[v], json_array());
    for (size_t i = 0; all != NULL && i < p->n_var_sources; i++) {
        const lc_var_source_t *src = &p->var_sources[i];
        json_array_append_new(json_object_get(all, p->vars[src->slot]),
                              json_pack("{s:s,s:s}", "by", kinds[src->kind], "path", src->path));
    }
    for (size_t f = 0; all != NULL && f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        char name[160], path[160];
        snprintf(path, sizeof path, "feeders.%s", fd->name);
        for (size_t c = 0; c < fd->table.n_cols; c++) {
            snprintf(name, sizeof name, "%s.%s", fd->name, fd->table.cols[c]);
            json_object_set_new(all, name, json_pack("[{s:s,s:s}]", "by", "feeder", "path", path));
        }
    }
    return all;
}

static json_t *feeders_json(const lc_program_t *p)
{
    static const char *const modes[] = {"per_user", "per_iteration"};
    static const char *const orders[] = {"sequential", "shuffle", "random"};
    static const char *const policies[] = {"wrap", "stop_user", "stop_run"};
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < p->n_feeders; i++) {
        const lc_feeder_t *f = &p->feeders[i];
        json_t *cols = json_array(), *secret = json_array();
        for (size_t c = 0; cols != NULL && c < f->table.n_cols; c++)
            json_array_append_new(cols, json_string(f->table.cols[c]));
        for (size_t c = 0; secret != NULL && c < f->table.n_cols; c++)
            if (f->secret[c])
                json_array_append_new(secret, json_string(f->table.cols[c]));
        json_array_append_new(list, json_pack("{s:s,s:I,s:o,s:s,s:s,s:s,s:o}", "name", f->name,
                                              "rows", (json_int_t)f->table.n_rows, "columns",
                                              cols, "mode", modes[f->mode], "order",
                                              orders[f->order], "on_exhausted",
                                              policies[f->on_exhausted], "secret", secret));
    }
    return list;
}

static json_t *endpoints_json(const lc_scenario_t *s)
{
    if (s->program != NULL)
        return program_endpoints_json(s->program);
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < s->n_tasks; i++) {
        const lc_task_t *t = &s->tasks[i];
        json_t *e = json_pack("{s:s,s:s,s:s,s:I}", "name", t->name, "method", t->method, "path",
                              t->path, "weight", (json_int_t)t->weight);
        if (json_array_append_new(list, e) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

static json_t *thresholds_json(const lc_scenario_t *s)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < s->n_thresholds; i++) {
        char label[256];
        lc_threshold_label(&s->thresholds[i], label, sizeof label);
        if (json_array_append_new(list, json_string(label)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* {bytes, modules: [names], lua_steps: [{step, function, endpoint}]} */
static json_t *script_json(const lc_scenario_t *s)
{
    const lc_program_t *p = s->program;
    json_t *mods = json_array(), *steps = json_array();
    for (size_t i = 0; mods != NULL && i < s->n_modules; i++)
        json_array_append_new(mods, json_string(s->modules[i].name));
    for (size_t i = 0; steps != NULL && i < p->n_luas; i++)
        json_array_append_new(steps, json_pack("{s:s,s:s,s:s}", "step", p->luas[i].path_json,
                                               "function", p->luas[i].fn, "endpoint",
                                               p->endpoints[p->luas[i].endpoint].name));
    return json_pack("{s:I,s:o,s:o}", "bytes", (json_int_t)s->script_len, "modules", mods,
                     "lua_steps", steps);
}

static json_t *memory_parts_json(const lc_idle_user_bytes_t *b)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "user", (json_int_t)b->user, "allocator",
                     (json_int_t)b->allocator, "libuv", (json_int_t)b->libuv, "tls",
                     (json_int_t)b->tls, "journey", (json_int_t)b->journey, "lua",
                     (json_int_t)b->lua, "h2", (json_int_t)b->h2);
}

/* The users the scenario holds at most (the summary's "users"). */
static uint64_t users_asked(const lc_scenario_t *s)
{
    return s->arrival_rate > 0 ? s->max_users : s->users;
}

json_t *lc_scenario_summary(const lc_scenario_t *s)
{
    assert(s != NULL && s->name != NULL && s->tenant != NULL && s->target != NULL);
    bool open = s->arrival_rate > 0;
    lc_idle_user_bytes_t bytes;
    lc_scenario_idle_user_bytes(s, &bytes);
    /* "o" takes the reference even when the pack fails; a NULL part fails it. */
    json_t *summary = json_pack("{s:s,s:s,s:s,s:s,s:I,s:o,s:I,s:I,s:o,s:o,s:I,s:o}", "name", s->name,
                     "tenant", s->tenant, "target", s->target, "model", open ? "open" : "closed",
                     "users", (json_int_t)users_asked(s), "arrival_rate",
                     open ? json_real(s->arrival_rate) : json_null(), "duration_ms",
                     (json_int_t)s->duration_ms, "stages", (json_int_t)s->n_stages, "endpoints",
                     endpoints_json(s), "thresholds", thresholds_json(s), "bytes_per_idle_user",
                     (json_int_t)bytes.total, "bytes_per_idle_user_parts",
                     memory_parts_json(&bytes));
    if (summary != NULL && s->program != NULL &&
        json_object_update_new(summary, json_pack("{s:o,s:o,s:o,s:o}", "journeys",
                                                  journeys_json(s->program), "variables",
                                                  variables_json(s->program), "variables_set_at",
                                                  variables_set_at_json(s->program), "feeders",
                                                  feeders_json(s->program))) != 0) {
        json_decref(summary);
        return NULL;
    }
    if (summary != NULL && s->script != NULL &&
        json_object_set_new(summary, "script", script_json(s)) != 0) {
        json_decref(summary);
        return NULL;
    }
    return summary;
}

json_t *lc_scenario_capacity_json(const lc_scenario_t *s, const lc_fleet_grant_t *g)
{
    assert(s != NULL && g != NULL);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(s, &b);
    uint64_t asked = users_asked(s);
    return json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:o}", "known", g->known, "workers",
                     (json_int_t)g->workers, "users", (json_int_t)g->users, "bytes",
                     (json_int_t)(g->users * b.total), "users_asked", (json_int_t)asked,
                     "bytes_asked", (json_int_t)(asked * b.total), "fits",
                     g->known ? json_boolean(asked <= g->users) : json_null());
}
