/* lc_journey.h — scenario v2's journeys compiled into flat, read-only op arrays: the one
 * compiler the master validates with and the workers run (../shared/JOURNEYS.md). */
#ifndef LC_JOURNEY_H
#define LC_JOURNEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lc_addr.h"
#include "lc_codings.h"
#include "lc_csv.h"
#include "lc_extract.h"
#include "lc_origins.h"
#include "lc_value.h"

#define LC_JOURNEYS_MAX 64u
#define LC_JOURNEY_OPS_MAX 4096u    /* ops of the whole program */
#define LC_JOURNEY_VARS_MAX 128u
#define LC_JOURNEY_DEPTH_MAX 8u     /* nesting of repeat, while, foreach and group */
#define LC_JOURNEY_REPEAT_MAX 10000u
#define LC_JOURNEY_FEEDERS_MAX 16u
#define LC_JOURNEY_EXTRACTS_MAX 16u /* per request */
#define LC_JOURNEY_REDIRECTS_MAX 20u
#define LC_JOURNEY_ENDPOINTS_MAX 256u
#define LC_JOURNEY_GROUPS_MAX 64u
#define LC_JOURNEY_LUA_ENDPOINTS_MAX 64u /* names one lua step's requests may be counted under */
#define LC_JOURNEY_LUA_FN_MAX 64u        /* bytes of a lua step's function name */
/* Slots: variables are 0..n_vars-1; feeder columns from here on, so a template compiled
 * before the last variable was seen keeps its numbers. */
#define LC_JOURNEY_FEEDER_SLOT0 LC_JOURNEY_VARS_MAX

typedef struct lc_tpl_s lc_tpl_t;
typedef struct lc_cond_s lc_cond_t;

enum lc_op_code {
    LC_OP_REQ,       /* a: request index */
    LC_OP_THINK,     /* a, b: min and max ms */
    LC_OP_SET,       /* a: slot; b: template index */
    LC_OP_FEED,      /* a: feeder index */
    LC_OP_IF,        /* a: condition index; false: jump to target */
    LC_OP_JMP,       /* jump to target */
    LC_OP_REPEAT,    /* a: template index of the count (UINT32_MAX: b is the count); target: after its NEXT */
    LC_OP_WHILE,     /* a: condition; b: max iterations; target: after its NEXT */
    LC_OP_FOREACH,   /* a: list slot; b: the "as" slot; target: after its NEXT */
    LC_OP_NEXT,      /* end of a loop body; target: the loop's op */
    LC_OP_RAND,      /* a: first branch in the program's branches; b: how many */
    LC_OP_GROUP,     /* a: group index: starts its timer */
    LC_OP_GROUP_END, /* a: group index: records group_duration */
    LC_OP_EXIT,      /* a: enum lc_exit */
    LC_OP_END,       /* end of a section (on_start, steps, on_stop) */
    LC_OP_LUA,       /* a: lua step index: runs a function of the scenario's script */
};

enum lc_exit { LC_EXIT_ITERATION, LC_EXIT_USER };
enum lc_on_error { LC_ON_ERROR_NEXT_ITERATION, LC_ON_ERROR_CONTINUE, LC_ON_ERROR_STOP_USER };

typedef struct lc_op_s {
    uint8_t code; /* enum lc_op_code */
    uint8_t type; /* LC_OP_SET: the value's enum lc_vtype */
    uint32_t a, b;
    uint32_t target;
} lc_op_t;

/* One weighted branch of a "random" step. */
typedef struct lc_branch_s {
    uint64_t cum_weight; /* sum of the weights of this and the earlier branches */
    uint32_t target;     /* first op of the branch */
} lc_branch_t;

enum lc_extract_kind {
    LC_EXTRACT_BODY,   /* json, regex or between: the extractor reads the body */
    LC_EXTRACT_HEADER, /* a response header, case-insensitive */
    LC_EXTRACT_COOKIE, /* a cookie in the user's jar after the response */
    LC_EXTRACT_STATUS, /* the response status */
};

typedef struct lc_jextract_s {
    uint32_t slot;
    uint8_t kind;           /* enum lc_extract_kind */
    bool required;          /* a miss is error kind "extract" */
    bool has_default;
    uint8_t default_type;   /* enum lc_vtype */
    lc_extractor_t *x;      /* LC_EXTRACT_BODY */
    char *name;             /* header or cookie name */
    char *default_value;
    size_t default_len;
} lc_jextract_t;

enum lc_body_kind { LC_BODY_NONE, LC_BODY_TEXT, LC_BODY_JSON, LC_BODY_FORM };

/* A "json" or "form" body: literal text between holes. A json body's hole is a string
 * with templates (rendered escaped between quotes) or a value that is exactly "${var}"
 * (the variable, keeping its JSON type); a form body's hole is a value, form-encoded. */
typedef struct lc_jbody_part_s {
    char *literal;        /* emitted as is (may be empty) */
    size_t literal_len;
    lc_tpl_t *tpl;        /* the hole's template, or NULL */
    int32_t typed_slot;   /* json: the variable of a "${var}" hole; else -1 */
} lc_jbody_part_t;

typedef struct lc_jheader_s {
    char *name;
    lc_tpl_t *value;
} lc_jheader_t;

typedef struct lc_jreq_s {
    char *path_json;       /* "journeys[0].steps[2]": where errors and the trace point */
    uint32_t endpoint;
    const char *method;    /* static text */
    uint8_t origin;        /* index in the scenario's origins ("origin", or an absolute URL's) */
    bool absolute;         /* path came from an absolute URL: no base path before it */
    lc_tpl_t *path;        /* the path (may hold its own query) */
    lc_jbody_part_t *query;/* "query" pairs, form-encoded, after the path; may be empty */
    size_t n_query;
    lc_jheader_t *headers;
    size_t n_headers;
    uint8_t body_kind;     /* enum lc_body_kind */
    lc_tpl_t *body;        /* LC_BODY_TEXT */
    lc_jbody_part_t *parts;/* LC_BODY_JSON, LC_BODY_FORM */
    size_t n_parts;
    int *expect_status;    /* empty: any status < 400 succeeds */
    size_t n_expect_status;
    char *expect_body_contains;
    lc_jextract_t *extracts;
    size_t n_extracts;
    uint32_t follow_redirects; /* hops; 0: a 3xx is the answer */
    uint32_t timeout_ms;
    bool cookies;          /* send and store cookies */
    bool head;             /* HEAD: no response body */
    bool needs_body;       /* an extract or expect reads the body */
    bool needs_location;   /* follows redirects */
    bool sets_content_type;/* the step's headers name Content-Type */
    bool path_repeatable;  /* path renders alike twice (lc_tpl_repeatable) */
    uint8_t on_error;      /* enum lc_on_error */
    lc_codings_t compression; /* what Accept-Encoding asks for: the step's, else the scenario's */
} lc_jreq_t;

/* A lua step ({"lua": "fname"}): runs global function fn of the scenario's script in the
 * user's coroutine (worker/journey_lua.c). Its requests are counted on endpoint unless they
 * name another (opts.name: any endpoint of the program, "endpoints" adds some); "groups"
 * adds group series its group(name, fn) calls may time (any group of the program). */
typedef struct lc_jlua_s {
    char *path_json;    /* "journeys[0].steps[2]" */
    char *fn;           /* a Lua identifier */
    uint32_t endpoint;  /* "name", default "lua <fn>"; its script errors are counted here */
    uint32_t timeout_ms;/* of each request it sends */
    uint32_t follow_redirects; /* hops its requests follow unless opts says; 0: the 3xx */
    bool cookies;       /* its requests send and store the user's cookies */
    uint8_t on_error;   /* enum lc_on_error: after a script error */
} lc_jlua_t;

/* The method of the endpoints that only lua steps name. */
#define LC_LUA_METHOD "LUA"

enum lc_feed_mode { LC_FEED_PER_USER, LC_FEED_PER_ITERATION };
enum lc_feed_order { LC_FEED_SEQUENTIAL, LC_FEED_SHUFFLE, LC_FEED_RANDOM };
enum lc_feed_exhausted { LC_FEED_WRAP, LC_FEED_STOP_USER, LC_FEED_STOP_RUN };

typedef struct lc_feeder_s {
    char *name;
    lc_table_t table;
    uint8_t mode, order, on_exhausted;
    uint32_t first_slot; /* ${name.col} is slot first_slot + col */
    bool *secret;        /* per column: kept out of traces (lc_feeder_secret_name, "secret") */
} lc_feeder_t;

/* Whether a feeder column named name is secret by its name alone: it contains "secret",
 * "password", "passwd", "token" or "key", in any case. A feeder's "secret" list adds others. */
bool lc_feeder_secret_name(const char *name);

/* Whether a run under a master takes f's rows in leases from the leader (FeedRequest): the
 * sequential order, in both modes, whose rows no two users in the cluster may share. */
static inline bool lc_feeder_leased(const lc_feeder_t *f)
{
    return f->order == LC_FEED_SEQUENTIAL;
}

typedef struct lc_journey_s {
    char *name;
    uint32_t weight;
    uint32_t pacing_ms;   /* minimum iteration period; 0: none */
    uint32_t on_start, steps, on_stop; /* first op of each section (each ends with LC_OP_END) */
    uint8_t on_error;     /* the journey's default */
    uint32_t timer;       /* index of its iteration_duration series in the program's timers */
} lc_journey_t;

/* A series of durations that is not a request: an iteration of a journey or a group. */
enum lc_timer_kind { LC_TIMER_ITERATION, LC_TIMER_GROUP };
typedef struct lc_timer_s {
    uint8_t kind;
    char *name;      /* journey or group name */
    char *series;    /* its statistics series: "iteration:<name>" or "group:<name>" */
} lc_timer_t;

/* A place that sets a variable, as the dataflow check counts it (lc_journey_dataflow.c): a
 * "set", an extract, a foreach's "as" or a lua step whose script names it as u.vars.x. */
enum lc_var_src_kind { LC_VAR_SRC_SET, LC_VAR_SRC_EXTRACT, LC_VAR_SRC_FOREACH, LC_VAR_SRC_LUA };
typedef struct lc_var_source_s {
    uint32_t slot;  /* the variable */
    uint8_t kind;   /* enum lc_var_src_kind */
    char *path;     /* "journeys[0].steps[1].extract.token" */
} lc_var_source_t;

typedef struct lc_endpoint_def_s {
    char *name;
    const char *method;
} lc_endpoint_def_t;

typedef struct lc_program_s {
    lc_journey_t *journeys;
    size_t n_journeys;
    uint64_t total_weight;
    lc_op_t *ops;
    size_t n_ops;
    lc_jreq_t *reqs;
    size_t n_reqs;
    lc_tpl_t **tpls;        /* SET values and REPEAT counts */
    size_t n_tpls;
    lc_cond_t **conds;
    size_t n_conds;
    lc_branch_t *branches;
    size_t n_branches;
    char **vars;            /* slot i < n_vars: a variable's name */
    size_t n_vars;
    lc_var_source_t *var_sources; /* where each variable is set, by slot, then op order */
    size_t n_var_sources;
    lc_feeder_t *feeders;
    size_t n_feeders;
    size_t n_slots;         /* LC_JOURNEY_FEEDER_SLOT0 + every feeder column */
    lc_endpoint_def_t *endpoints;
    size_t n_endpoints;
    lc_timer_t *timers;     /* iteration timers first (one per journey), then groups */
    size_t n_timers;
    lc_jlua_t *luas;        /* lua steps */
    size_t n_luas;
    bool uses_cookies;
    bool cookies_reset_iteration; /* defaults.cookies {"reset": "iteration"}: a fresh jar each
                                   * iteration (on_start's cookies last until the first) */
} lc_program_t;

/* Compiles a scenario's "journeys" (required, non-empty), "feeders" and "defaults" members of
 * root, and its "tasks" (each then a single-step journey). Every request path starts with '/'
 * or is an absolute URL of one of origins (the scenario's target and targets); a step's
 * "origin" names one of them. Returns 0 with *out (free with lc_program_free), LC_ENOMEM, or LC_EINVAL with
 * "<json path>: <what was wrong>" in errmsg, including the dataflow check's "uses ${x},
 * which may be unset here (set at …)". Lua steps need root's "script": the dataflow check
 * counts a lua step as setting every variable the script or its modules name as u.vars.x
 * (or u.vars["x"]); whether the function exists is the sandbox's check, not this one. */
int lc_program_compile(json_t *root, const lc_origins_t *origins, lc_program_t **out,
                       char *errmsg, size_t errlen);
void lc_program_free(lc_program_t *p);

/* Index of the endpoint named name, or -1. */
int lc_program_endpoint(const lc_program_t *p, const char *name);
/* Index of the timer of kind named name, or -1. */
int lc_program_timer(const lc_program_t *p, uint8_t kind, const char *name);
/* The slot of a variable, or of a feeder column ("feeder.column"), named name; -1 if none. */
int lc_program_slot(const lc_program_t *p, const char *name, size_t len);
/* The name of slot (a variable, or "feeder.column" written into buf). */
const char *lc_program_slot_name(const lc_program_t *p, uint32_t slot, char *buf, size_t len);

/* The journey of the user numbered user_id (1, 2, … : ${user_id}, unique in the cluster):
 * (user_id - 1) mod the total weight falls in one journey's range, so every total_weight
 * consecutive users divide exactly by weight (weights 3 and 1: users 1-3 buy, user 4
 * browses), whatever workers they run on. */
size_t lc_program_journey_of(const lc_program_t *p, uint64_t user_id);

#endif
