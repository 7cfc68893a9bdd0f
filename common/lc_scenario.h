/* lc_scenario.h — the scenario JSON (v1): parsing, validation with errors that
 * name the JSON path, defaults and bounds. */
#ifndef LC_SCENARIO_H
#define LC_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lc_addr.h"
#include "lc_codings.h"
#include "lc_journey.h"
#include "lc_json_fields.h"
#include "lc_origins.h"
#include "lc_threshold.h"

#define LC_SCENARIO_MAX_BYTES (1u << 20) /* 1 MiB */
#define LC_SCENARIO_MAX_USERS 1000000u
#define LC_SCENARIO_MAX_TASKS 256u
#define LC_SCENARIO_MAX_STAGES 100u
#define LC_SCENARIO_MAX_HEADERS 64u
#define LC_SCENARIO_MODULES_MAX 64u     /* as common/script's LC_LUA_MODULES_MAX */
#define LC_SCENARIO_SCRIPT_CPU_MS_DEFAULT 2u /* as common/script's LC_LUA_DEADLINE_US_DEFAULT */
#define LC_SCENARIO_SCRIPT_CPU_MS_MAX 50u    /* as its LC_LUA_DEADLINE_US_MAX */
#define LC_SCENARIO_SEED_MAX ((1ULL << 53) - 1) /* a JSON number any parser keeps exactly */
#define LC_SCENARIO_MODULE_NAME_MAX 64u /* as LC_LUA_MODULE_NAME_MAX */

typedef struct lc_header_s {
    char *name;
    char *value;
} lc_header_t;

typedef struct lc_task_s {
    char *name;          /* default: "<METHOD> <path>" */
    uint32_t weight;     /* default 1, 1..1000000 (0 is an error) */
    char *method;        /* GET POST PUT PATCH DELETE HEAD OPTIONS; default GET */
    char *path;          /* required, starts with '/'; may hold ${…} templates */
    lc_header_t *headers;
    size_t n_headers;
    char *body;          /* NULL when absent; may hold templates */
    int *expect_status;  /* empty: any status < 400 is a success */
    size_t n_expect_status;
    char *expect_body_contains; /* NULL when absent */
    lc_codings_t compression; /* v1: the task's "compression", else the scenario's */
} lc_task_t;

typedef struct lc_stage_s {
    uint64_t duration_ms;
    uint32_t target;     /* users (closed model) or requests/s (open model) */
} lc_stage_t;

enum lc_policy { LC_POLICY_DEGRADE, LC_POLICY_QUEUE };

/* "http2": false (HTTP/1.1), true (https: ALPN h2 only; http: prior-knowledge h2c) or "auto"
 * (https: ALPN offers h2 and http/1.1, the server picks; http: HTTP/1.1). */
enum lc_http2 { LC_HTTP2_OFF, LC_HTTP2_ON, LC_HTTP2_AUTO };

/* "http2": {"mode": true|"auto", "pool": {"connections": C, "max_streams": M}}: a worker's C
 * connections shared by its users, each carrying up to M concurrent streams (see README). */
#define LC_H2_POOL_CONNS_MAX 1024u
#define LC_H2_POOL_STREAMS_MAX 1000u
#define LC_H2_POOL_STREAMS_DEFAULT 100u

/* One of the scenario's Lua modules ("modules": {"name": "source"}): what require sees. */
typedef struct lc_script_module_s {
    char *name; /* 1..LC_SCENARIO_MODULE_NAME_MAX of [A-Za-z0-9_.-] */
    char *src;  /* source text (no NUL byte, not bytecode) */
    size_t len;
} lc_script_module_t;

typedef struct lc_scenario_s {
    char *name;          /* required, 1..128 chars */
    char *tenant;        /* default "default" */
    char *target;        /* required URL text */
    lc_url_t url;        /* parsed target */
    /* Every origin a run may reach: origins.at[0] is target ("default"), then "targets"
     * (journeys only: steps name one with "origin" or an absolute URL). */
    lc_origins_t origins;
    uint64_t duration_ms; /* required unless stages given (then their sum); 1 s..7 d */
    /* Closed model. */
    uint32_t users;      /* 1..LC_SCENARIO_MAX_USERS; default 1 */
    double spawn_rate;   /* users/s, > 0; default = users (all in the first second) */
    uint32_t think_min_ms, think_max_ms; /* "think_time_ms": n or [min, max]; default 0 */
    /* Open model: arrival_rate > 0 selects it. */
    double arrival_rate; /* requests/s; 0 = closed model */
    uint32_t max_users;  /* open model; default 1000 */
    lc_stage_t *stages;
    size_t n_stages;
    struct {
        bool insecure;
        char *ca_pem;    /* inline PEM CA certificates (validated); NULL: none */
        char *ca_file;   /* a file name in the worker's --tls-ca-dir; NULL: none */
                         /* neither: the system's default CAs */
    } tls;
    lc_task_t *tasks;    /* 1..LC_SCENARIO_MAX_TASKS */
    size_t n_tasks;
    lc_threshold_t *thresholds; /* 0..LC_THRESHOLDS_MAX, in the order given (old keys first) */
    size_t n_thresholds;
    enum lc_policy policy;
    enum lc_http2 http2; /* default LC_HTTP2_OFF */
    struct {
        uint32_t connections; /* per worker, split across its engines; 0: no pool */
        uint32_t max_streams; /* concurrent streams per connection (and the server's limit) */
    } h2_pool;
    uint32_t connect_timeout_ms; /* default 5000 */
    uint32_t request_timeout_ms; /* default 30000 */
    /* "idle_timeout_ms": a connection to one of "targets" idle this long is closed and its
     * memory freed (target's own connection stays open between requests); default 30000. */
    uint32_t idle_timeout_ms;
    /* "close_idle_target": target's own connection closes when idle that long too, so an
     * idle https user holds no OpenSSL state (its next request resumes the session). */
    bool close_idle_target;
    /* "compression": the codings asked for in Accept-Encoding (default: none, so no header);
     * a task or a step may give its own. Whatever the answer's Content-Encoding, a step that
     * reads the body reads it decoded. */
    lc_codings_t compression;
    lc_program_t *program; /* v2: the compiled journeys (tasks among them); NULL: v1 tasks */
    /* v2: "script", the Lua source whose functions lua steps run, or NULL; "modules". The
     * master and the worker's plan load it in the sandbox (common/script) before a run. */
    char *script;
    size_t script_len;
    lc_script_module_t *modules;
    size_t n_modules;
    /* "script_cpu_ms": the CPU deadline of each start or resume of a step's function, 1..50,
     * default 2. "seed": the run's seed (0..2^53-1; default from the name), which seeds each
     * user's math.random with its ${user_id}: the same seed, the same numbers. */
    uint32_t script_cpu_ms;
    uint64_t seed;
} lc_scenario_t;

/* The methods of the series that are not requests (journeys' iterations and groups). */
#define LC_SERIES_ITERATION "ITERATION"
#define LC_SERIES_GROUP "GROUP"

/* Whether a series' method marks it as a journey's iteration or group (not requests). */
bool lc_series_is_timer(const char *method);

/* Parses and validates; on success fills *out (free with lc_scenario_free).
 * On failure returns LC_EINVAL and writes "<json path>: <what was expected>"
 * into errmsg, e.g. "tasks[2].method: expected one of GET, POST, …", and *out
 * is left zeroed. Unknown fields are errors. */
int lc_scenario_parse(const char *json, size_t len, lc_scenario_t *out, char *errmsg,
                      size_t errlen);
void lc_scenario_free(lc_scenario_t *s);

/* The statistics series a worker sends for s: v1, one per task; v2, one per request name,
 * then one per journey ("iteration:<journey>", method ITERATION) and group ("group:<name>",
 * method GROUP). */
size_t lc_scenario_series_count(const lc_scenario_t *s);
void lc_scenario_series_at(const lc_scenario_t *s, size_t i, const char **name,
                           const char **method);
/* Index of the series named name (its method into *method when not NULL), or -1. */
int lc_scenario_series_find(const lc_scenario_t *s, const char *name, const char **method);

/* For the journey compiler: a request's name, method, path, headers, body and expect
 * members of obj into t (zeroed by the caller; free with lc_task_free), without checking
 * for other members. v1: templates are v1's built-ins only (journeys compile theirs). */
int lc_scenario_parse_request(lc_jp_t *p, json_t *obj, const char *parent, lc_task_t *t,
                              bool v1);
void lc_task_free(lc_task_t *t);
/* Refuses t's headers naming Accept-Encoding when t has a compression list (both would say
 * what to send); errors name parent.compression. */
int lc_scenario_check_accept(lc_jp_t *p, const char *parent, const lc_task_t *t);

/* lc_scenario_script.c, for lc_scenario_parse: root's "script" and "modules" into s (after
 * the journeys are compiled: a script belongs to journeys). */
int lc_scenario_parse_script(lc_jp_t *p, json_t *root, lc_scenario_t *s);
void lc_scenario_free_script(lc_scenario_t *s);
/* lc_scenario_http2.c, for lc_scenario_parse (after the journeys and the model): root's
 * "http2" into s->http2 and s->h2_pool. */
int lc_scenario_parse_http2(lc_jp_t *p, json_t *root, lc_scenario_t *s);

/* Parses a duration: a non-negative integer of seconds, or a string like
 * "500ms", "30s", "5m", "1h", "1m30s". Returns 0 or LC_EINVAL. */
int lc_duration_parse(const char *text, uint64_t *out_ms);

#endif
