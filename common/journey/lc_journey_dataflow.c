/* lc_journey_dataflow.c — the dataflow check: every variable a step reads is set on every
 * path that reaches it (by set, an extract that cannot leave it unset, foreach's "as", or a
 * lua step whose script names it as u.vars.x).
 * A must-analysis over the op graph: a variable is set at an op when it is set on all of
 * the op's predecessors; the error names the use and a place that sets the variable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_cond.h"
#include "lc_err.h"
#include "lc_journey_internal.h"

#define WORDS ((LC_JOURNEY_VARS_MAX + 63) / 64)
#define USES_MAX 256

typedef struct varset_s {
    uint64_t w[WORDS];
} varset_t;

static void vs_add(varset_t *s, uint32_t v)
{
    s->w[v / 64] |= 1ull << (v % 64);
}

static bool vs_has(const varset_t *s, uint32_t v)
{
    return (s->w[v / 64] >> (v % 64)) & 1u;
}

/* *dst &= src; true when dst changed. */
static bool vs_meet(varset_t *dst, const varset_t *src)
{
    bool changed = false;
    for (size_t i = 0; i < WORDS; i++) {
        uint64_t w = dst->w[i] & src->w[i];
        changed |= w != dst->w[i];
        dst->w[i] = w;
    }
    return changed;
}

/* The variables an extract leaves set whatever the response: a default, or a required
 * value whose miss ends the iteration (or the user). */
static void request_defs(const lc_jreq_t *r, varset_t *out)
{
    for (size_t i = 0; i < r->n_extracts; i++) {
        const lc_jextract_t *e = &r->extracts[i];
        if (e->has_default || (e->required && r->on_error != LC_ON_ERROR_CONTINUE))
            vs_add(out, e->slot);
    }
}

static size_t tpl_uses(const lc_tpl_t *t, int *slots, size_t n)
{
    return t == NULL || n >= USES_MAX ? n : n + lc_tpl_uses(t, slots + n, USES_MAX - n);
}

static size_t parts_uses(const lc_jbody_part_t *parts, size_t count, int *slots, size_t n)
{
    for (size_t i = 0; i < count; i++)
        n = tpl_uses(parts[i].tpl, slots, n);
    return n;
}

/* The slots op reads. */
static size_t op_uses(const lc_program_t *p, const lc_op_t *op, int *slots)
{
    size_t n = 0;
    switch (op->code) {
    case LC_OP_REQ: {
        const lc_jreq_t *r = &p->reqs[op->a];
        n = tpl_uses(r->path, slots, n);
        n = parts_uses(r->query, r->n_query, slots, n);
        for (size_t i = 0; i < r->n_headers; i++)
            n = tpl_uses(r->headers[i].value, slots, n);
        n = tpl_uses(r->body, slots, n);
        return parts_uses(r->parts, r->n_parts, slots, n);
    }
    case LC_OP_SET:
        return tpl_uses(p->tpls[op->b], slots, n);
    case LC_OP_REPEAT:
        return op->a == UINT32_MAX ? 0 : tpl_uses(p->tpls[op->a], slots, n);
    case LC_OP_IF:
    case LC_OP_WHILE:
        return lc_cond_uses(p->conds[op->a], slots, USES_MAX);
    case LC_OP_FOREACH:
        slots[0] = (int)op->a;
        return 1;
    default:
        return 0;
    }
}

typedef struct flow_s {
    jc_t *c;
    varset_t lua_defs;  /* the variables the script names as u.vars.x */
    varset_t *in;
    bool *reached;
    uint32_t *work;
    size_t n_work;
    bool *queued;
} flow_t;

static void push(flow_t *f, uint32_t op, const varset_t *state)
{
    bool changed = !f->reached[op];
    if (!f->reached[op]) {
        f->in[op] = *state;
        f->reached[op] = true;
    } else {
        changed = vs_meet(&f->in[op], state);
    }
    if (changed && !f->queued[op]) {
        f->queued[op] = true;
        f->work[f->n_work++] = op;
    }
}

/* Passes op's state on to its successors. */
static void step_op(flow_t *f, uint32_t at)
{
    const lc_program_t *p = f->c->prog;
    const lc_op_t *op = &p->ops[at];
    varset_t out = f->in[at];
    switch (op->code) {
    case LC_OP_REQ:
        request_defs(&p->reqs[op->a], &out);
        break;
    case LC_OP_SET:
        vs_add(&out, op->a);
        break;
    case LC_OP_LUA:
        /* A script error may stop the function before it sets them: with on_error
         * continue the next step could see them unset (as an extract's). */
        for (size_t i = 0; p->luas[op->a].on_error != LC_ON_ERROR_CONTINUE && i < WORDS; i++)
            out.w[i] |= f->lua_defs.w[i];
        break;
    default:
        break;
    }
    switch (op->code) {
    case LC_OP_END:
    case LC_OP_EXIT:
        return;
    case LC_OP_JMP:
        push(f, op->target, &out);
        return;
    case LC_OP_IF:
    case LC_OP_WHILE:
        push(f, op->target, &out);
        break;
    case LC_OP_REPEAT:
        if (op->a != UINT32_MAX || op->b == 0)
            push(f, op->target, &out);
        break;
    case LC_OP_FOREACH: {
        push(f, op->target, &out);
        varset_t body = out;
        vs_add(&body, op->b);
        push(f, at + 1, &body);
        return;
    }
    case LC_OP_NEXT:
        push(f, op->target + 1, &out);
        break;
    case LC_OP_RAND:
        for (uint32_t i = 0; i < op->b; i++)
            push(f, p->branches[op->a + i].target, &out);
        return;
    default:
        break;
    }
    push(f, at + 1, &out);
}

/* Runs the flow from entry with state until no op's state changes. */
static void run_flow(flow_t *f, uint32_t entry, const varset_t *state)
{
    push(f, entry, state);
    while (f->n_work > 0) {
        uint32_t at = f->work[--f->n_work];
        f->queued[at] = false;
        step_op(f, at);
    }
}

/* Whether the op at `at` sets slot; OUT: *kind (enum lc_var_src_kind). The one list of the
 * places that set a variable: the check's errors and the program's var_sources use it. */
static bool sets_slot(const flow_t *f, uint32_t at, uint32_t slot, uint8_t *kind)
{
    const lc_program_t *p = f->c->prog;
    const lc_op_t *op = &p->ops[at];
    *kind = op->code == LC_OP_SET       ? LC_VAR_SRC_SET
            : op->code == LC_OP_FOREACH ? LC_VAR_SRC_FOREACH
            : op->code == LC_OP_LUA     ? LC_VAR_SRC_LUA
                                        : LC_VAR_SRC_EXTRACT;
    if ((op->code == LC_OP_SET && op->a == slot) || (op->code == LC_OP_FOREACH && op->b == slot))
        return true;
    if (op->code == LC_OP_LUA && vs_has(&f->lua_defs, slot))
        return true;
    for (size_t k = 0; op->code == LC_OP_REQ && k < p->reqs[op->a].n_extracts; k++)
        if (p->reqs[op->a].extracts[k].slot == slot)
            return true;
    return false;
}

/* The path of an op that sets slot, for the error. */
static const char *where_set(const flow_t *f, uint32_t slot)
{
    uint8_t kind;
    for (uint32_t i = 0; i < f->c->prog->n_ops; i++)
        if (sets_slot(f, i, slot, &kind))
            return f->c->op_paths[i];
    return NULL;
}

/* Records that the op at `at` sets slot, with the JSON path of the member that does. */
static int add_source(flow_t *f, uint32_t at, uint32_t slot, uint8_t kind, size_t *cap)
{
    lc_program_t *p = f->c->prog;
    const char *op_path = f->c->op_paths[at], *name = p->vars[slot];
    char path[JPATH_MAX];
    if (kind == LC_VAR_SRC_SET) /* the op's path is the step's "set" */
        jc_path(path, "%s.%s", op_path, name);
    else if (kind == LC_VAR_SRC_EXTRACT)
        jc_path(path, "%s.extract.%s", op_path, name);
    else if (kind == LC_VAR_SRC_FOREACH)
        jc_path(path, "%s.as", op_path);
    else
        jc_path(path, "%s", op_path);
    int rv = jc_grow(f->c, (void **)&p->var_sources, cap, p->n_var_sources,
                     sizeof *p->var_sources);
    if (rv != 0)
        return rv;
    lc_var_source_t *src = &p->var_sources[p->n_var_sources];
    if ((src->path = strdup(path)) == NULL)
        return lc_jp_oom(&f->c->jp);
    src->slot = slot;
    src->kind = kind;
    p->n_var_sources++;
    return 0;
}

/* Every place that sets each variable, into the program (the validation summary's). */
static int record_sources(flow_t *f)
{
    const lc_program_t *p = f->c->prog;
    size_t cap = 0;
    uint8_t kind;
    for (uint32_t v = 0; v < p->n_vars; v++)
        for (uint32_t at = 0; at < p->n_ops; at++) {
            int rv = sets_slot(f, at, v, &kind) ? add_source(f, at, v, kind, &cap) : 0;
            if (rv != 0)
                return rv;
        }
    return 0;
}

static int check_uses(flow_t *f)
{
    const lc_program_t *p = f->c->prog;
    int slots[USES_MAX];
    for (uint32_t at = 0; at < p->n_ops; at++) {
        if (!f->reached[at])
            continue;
        size_t n = op_uses(p, &p->ops[at], slots);
        for (size_t i = 0; i < n; i++) {
            uint32_t s = (uint32_t)slots[i];
            if (s >= LC_JOURNEY_FEEDER_SLOT0 || vs_has(&f->in[at], s))
                continue;
            const char *set = where_set(f, s);
            if (set == NULL)
                return lc_jp_fail(&f->c->jp, f->c->op_paths[at], NULL,
                                  "uses ${%s}, which no step sets (by set, extract, foreach or "
                                  "a lua step's u.vars.%s)", p->vars[s], p->vars[s]);
            return lc_jp_fail(&f->c->jp, f->c->op_paths[at], NULL,
                              "uses ${%s}, which may be unset here: it is set at %s, but not "
                              "on every path that leads here",
                              p->vars[s], set);
        }
    }
    return 0;
}

/* on_start runs once with nothing set; the steps and on_stop start from what on_start
 * leaves set (on_stop after a failed on_start skips what it cannot render). */
static void flow_journey(flow_t *f, const lc_journey_t *j)
{
    varset_t none = {{0}}, after_start = {{0}};
    uint32_t end = j->steps - 1; /* on_start's END: the sections are laid out in order */
    run_flow(f, j->on_start, &none);
    if (f->reached[end])
        after_start = f->in[end];
    run_flow(f, j->steps, &after_start);
    run_flow(f, j->on_stop, &after_start);
}

int jc_dataflow(jc_t *c)
{
    const lc_program_t *p = c->prog;
    size_t n = p->n_ops;
    flow_t f = {.c = c};
    f.in = calloc(n + 1, sizeof *f.in);
    f.reached = calloc(n + 1, sizeof *f.reached);
    f.queued = calloc(n + 1, sizeof *f.queued);
    f.work = calloc(n + 1, sizeof *f.work);
    int rv = f.in && f.reached && f.queued && f.work ? 0 : lc_jp_oom(&c->jp);
    for (uint32_t v = 0; p->n_luas > 0 && v < p->n_vars; v++)
        if (jc_lua_sets(c, p->vars[v]))
            vs_add(&f.lua_defs, v);
    for (size_t j = 0; rv == 0 && j < p->n_journeys; j++) {
        memset(f.reached, 0, (n + 1) * sizeof *f.reached);
        flow_journey(&f, &p->journeys[j]);
        rv = check_uses(&f);
    }
    if (rv == 0)
        rv = record_sources(&f);
    free(f.in);
    free(f.reached);
    free(f.queued);
    free(f.work);
    return rv;
}
