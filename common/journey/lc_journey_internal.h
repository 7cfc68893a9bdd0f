/* lc_journey_internal.h — the journey compiler's state, shared by its parts (program,
 * steps, requests, dataflow); not for other modules. */
#ifndef LC_JOURNEY_INTERNAL_H
#define LC_JOURNEY_INTERNAL_H

#include "lc_json_fields.h"
#include "lc_journey.h"
#include "lc_tpl.h"

#define JPATH_MAX LC_JSON_PATH_MAX

/* Step defaults: the scenario's "defaults", overridden per journey (on_error) and step. */
typedef struct jdefaults_s {
    json_t *headers;          /* object or NULL */
    uint32_t follow_redirects;
    uint32_t timeout_ms;
    bool cookies;
    uint8_t on_error;
    lc_codings_t compression; /* the scenario's "compression" */
} jdefaults_t;

typedef struct jc_s {
    lc_jp_t jp;
    lc_program_t *prog;
    size_t cap_ops, cap_reqs, cap_tpls, cap_conds, cap_branches, cap_vars, cap_endpoints,
        cap_timers;
    char **op_paths;          /* per op: its JSON path, for the dataflow check's errors */
    size_t cap_op_paths;
    jdefaults_t defaults;
    uint32_t request_timeout_ms;
    unsigned depth;           /* nesting of the step being compiled */
    unsigned frames;          /* loops and groups around it: each holds a user's frame */
    lc_tpl_names_t names;
    json_t *root;             /* the scenario: its "script" and "modules" (lua steps) */
    const lc_origins_t *origins; /* target and targets: what a step's "origin" may name */
    char **lua_vars;          /* the names the script mentions as u.vars.x (jc_lua_scan) */
    size_t n_lua_vars, cap_lua_vars;
    size_t cap_luas;
} jc_t;

/* lc_journey.c */
/* Writes a JSON path (printf-style) into out[JPATH_MAX], cut when longer. */
void jc_path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int jc_grow(jc_t *c, void **arr, size_t *cap, size_t n, size_t size);
int jc_emit(jc_t *c, uint8_t code, uint32_t a, uint32_t b, const char *path, uint32_t *at);
int jc_var(jc_t *c, const char *name, const char *path, uint32_t *slot);
int jc_tpl(jc_t *c, const char *parent, const char *key, const char *src, size_t len,
           int mode, lc_tpl_t **out);
/* "on_error" of obj, if present, into *out. */
int jc_on_error(jc_t *c, json_t *obj, const char *parent, uint8_t *out);
/* The timer of group name (created on first use). */
int jc_group(jc_t *c, const char *name, const char *path, uint32_t *index);

/* The endpoint named name (created with method on first use); errors name parent.key. */
int jc_endpoint(jc_t *c, const char *name, const char *method, const char *parent,
                const char *key, uint32_t *index);

/* lc_journey_steps.c: compiles a steps array at parent into ops. */
int jc_steps(jc_t *c, json_t *steps, const char *parent);
/* lc_journey_request.c: a request step (obj has "path") into a new request and its op. */
int jc_request(jc_t *c, json_t *obj, const char *path);
void jc_request_free(lc_jreq_t *r);
/* lc_journey_origin.c: the origin of a request step into r->origin and r->absolute; an
 * absolute URL's path replaces view's "path", and a step on another origin than target is
 * named "<METHOD> <origin>:<path>" unless it has a name. */
int jc_request_origin(jc_t *c, json_t *view, const char *path, lc_jreq_t *r);
/* lc_journey_lua.c: a lua step ({"lua": "fname", ...}) into a new lua step and its op. */
int jc_lua_step(jc_t *c, json_t *obj, const char *path);
/* The names root's script and modules mention as vars.x or vars["x"], into c->lua_vars. */
int jc_lua_scan(jc_t *c);
/* Whether the script mentions variable name (a lua step may set it). */
bool jc_lua_sets(const jc_t *c, const char *name);
void jc_lua_free(jc_t *c);

/* lc_journey_dataflow.c: every variable is set on every path that reaches its use; then every
 * place that sets one into the program's var_sources. */
int jc_dataflow(jc_t *c);

#endif
