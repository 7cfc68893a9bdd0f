/* lc_journey_steps.c — compiles a journey's steps (think, set, feed, if, repeat, while,
 * foreach, random, group, exit; requests in lc_journey_request.c, lua steps in
 * lc_journey_lua.c) into ops with jumps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_cond.h"
#include "lc_err.h"
#include "lc_journey_internal.h"

#define NESTING_MAX 32u   /* steps inside steps, any kind */
#define THINK_MAX_MS 3600000u

static const char *const step_kinds[] = {"path", "think_ms", "set", "feed", "if", "repeat",
                                         "while", "foreach", "random", "group", "exit", "lua",
                                         NULL};

static int body(jc_t *c, json_t *obj, const char *parent, const char *key, bool required,
                bool frame);

static uint32_t here(const jc_t *c)
{
    return (uint32_t)c->prog->n_ops;
}

static int add_cond(jc_t *c, json_t *v, const char *parent, const char *key, uint32_t *index)
{
    char sub[200];
    lc_cond_t *cond = NULL;
    lc_program_t *p = c->prog;
    if (!json_is_string(v))
        return lc_jp_fail(&c->jp, parent, key, "expected a condition like \"${count} > 0\"");
    int rv = lc_cond_compile(&cond, json_string_value(v), json_string_length(v), &c->names, sub,
                             sizeof sub);
    if (rv != 0 && rv != LC_ENOMEM) /* EINVAL, ETOOBIG: sub says what */
        return lc_jp_fail(&c->jp, parent, key, "%s", sub);
    if (rv == 0)
        rv = jc_grow(c, (void **)&p->conds, &c->cap_conds, p->n_conds, sizeof *p->conds);
    if (rv != 0) {
        lc_cond_free(cond);
        return rv == LC_ENOMEM ? lc_jp_oom(&c->jp) : rv;
    }
    p->conds[p->n_conds] = cond;
    *index = (uint32_t)p->n_conds++;
    return 0;
}

static int add_tpl(jc_t *c, json_t *v, const char *parent, const char *key, uint32_t *index)
{
    lc_program_t *p = c->prog;
    char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
    const char *src = json_is_string(v) ? json_string_value(v) : text;
    if (src == NULL)
        return lc_jp_oom(&c->jp);
    lc_tpl_t *t = NULL;
    int rv = jc_tpl(c, parent, key, src, strlen(src), LC_TPL_RAW, &t);
    free(text);
    if (rv == 0)
        rv = jc_grow(c, (void **)&p->tpls, &c->cap_tpls, p->n_tpls, sizeof *p->tpls);
    if (rv != 0) {
        lc_tpl_free(t);
        return rv;
    }
    p->tpls[p->n_tpls] = t;
    *index = (uint32_t)p->n_tpls++;
    return 0;
}

static int step_think(jc_t *c, json_t *v, const char *path)
{
    uint64_t lo, hi;
    int rv;
    if (json_is_array(v) && json_array_size(v) == 2) {
        if ((rv = lc_jp_uint_value(&c->jp, json_array_get(v, 0), path, "think_ms[0]", 0,
                                   THINK_MAX_MS, &lo)) != 0 ||
            (rv = lc_jp_uint_value(&c->jp, json_array_get(v, 1), path, "think_ms[1]", lo,
                                   THINK_MAX_MS, &hi)) != 0)
            return rv;
    } else if ((rv = lc_jp_uint_value(&c->jp, v, path, "think_ms", 0, THINK_MAX_MS, &lo)) != 0) {
        return lc_jp_fail(&c->jp, path, "think_ms", "expected milliseconds or [min, max]");
    } else {
        hi = lo;
    }
    return jc_emit(c, LC_OP_THINK, (uint32_t)lo, (uint32_t)hi, path, NULL);
}

/* {"set": {"var": "template" | number | true | null, ...}}: one SET per variable; a
 * template renders text, a literal keeps its JSON type. */
static int step_set(jc_t *c, json_t *v, const char *path)
{
    char sub[JPATH_MAX];
    const char *name;
    json_t *value;
    jc_path(sub, "%s.set", path);
    if (!json_is_object(v) || json_object_size(v) == 0)
        return lc_jp_fail(&c->jp, path, "set", "expected an object of variable: value");
    json_object_foreach(v, name, value) {
        uint32_t slot, tpl, at;
        int rv;
        if (json_is_object(value) || json_is_array(value))
            return lc_jp_fail(&c->jp, sub, name, "expected a string, a number, a boolean or null");
        if ((rv = jc_var(c, name, sub, &slot)) != 0 || (rv = add_tpl(c, value, sub, name, &tpl)) != 0 ||
            (rv = jc_emit(c, LC_OP_SET, slot, tpl, sub, &at)) != 0)
            return rv;
        c->prog->ops[at].type = json_is_string(value)    ? LC_V_STRING
                                  : json_is_number(value)  ? LC_V_NUMBER
                                  : json_is_boolean(value) ? LC_V_BOOL
                                                           : LC_V_NULL;
    }
    return 0;
}

static int step_feed(jc_t *c, json_t *v, const char *path)
{
    const lc_program_t *p = c->prog;
    for (size_t i = 0; json_is_string(v) && i < p->n_feeders; i++)
        if (strcmp(p->feeders[i].name, json_string_value(v)) == 0)
            return jc_emit(c, LC_OP_FEED, (uint32_t)i, 0, path, NULL);
    return lc_jp_fail(&c->jp, path, "feed", "expected the name of a feeder");
}

static int step_if(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"if", "then", "else", NULL};
    uint32_t cond, at_if, at_jmp;
    int rv;
    if ((rv = lc_jp_fields(&c->jp, obj, path, fields)) != 0 ||
        (rv = add_cond(c, json_object_get(obj, "if"), path, "if", &cond)) != 0 ||
        (rv = jc_emit(c, LC_OP_IF, cond, 0, path, &at_if)) != 0 ||
        (rv = body(c, obj, path, "then", true, false)) != 0 ||
        (rv = jc_emit(c, LC_OP_JMP, 0, 0, path, &at_jmp)) != 0)
        return rv;
    c->prog->ops[at_if].target = here(c);
    if ((rv = body(c, obj, path, "else", false, false)) != 0)
        return rv;
    c->prog->ops[at_jmp].target = here(c);
    return 0;
}

/* Closes a loop that starts at op head: NEXT jumps back to it, head exits past NEXT. */
static int close_loop(jc_t *c, uint32_t head, const char *path)
{
    uint32_t at;
    int rv = jc_emit(c, LC_OP_NEXT, 0, 0, path, &at);
    if (rv != 0)
        return rv;
    c->prog->ops[at].target = head;
    c->prog->ops[head].target = here(c);
    return 0;
}

static int step_repeat(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"repeat", "steps", NULL};
    json_t *n = json_object_get(obj, "repeat");
    uint32_t tpl = UINT32_MAX, head;
    uint64_t count = 0;
    int rv = lc_jp_fields(&c->jp, obj, path, fields);
    if (rv == 0 && json_is_string(n))
        rv = add_tpl(c, n, path, "repeat", &tpl);
    else if (rv == 0 && !json_is_integer(n))
        rv = lc_jp_fail(&c->jp, path, "repeat", "expected a count (0 to %u) or a template",
                        LC_JOURNEY_REPEAT_MAX);
    else if (rv == 0)
        rv = lc_jp_uint_value(&c->jp, n, path, "repeat", 0, LC_JOURNEY_REPEAT_MAX, &count);
    if (rv != 0 || (rv = jc_emit(c, LC_OP_REPEAT, tpl, (uint32_t)count, path, &head)) != 0 ||
        (rv = body(c, obj, path, "steps", true, true)) != 0)
        return rv;
    return close_loop(c, head, path);
}

static int step_while(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"while", "max", "steps", NULL};
    uint32_t cond, head, max = 0;
    int rv = lc_jp_fields(&c->jp, obj, path, fields);
    if (rv == 0 && json_object_get(obj, "max") == NULL)
        rv = lc_jp_fail(&c->jp, path, "max", "required: a while loop needs a bound (1 to %u)",
                        LC_JOURNEY_REPEAT_MAX);
    if (rv != 0 || (rv = lc_jp_uint(&c->jp, obj, path, "max", 1, LC_JOURNEY_REPEAT_MAX, &max)) != 0 ||
        (rv = add_cond(c, json_object_get(obj, "while"), path, "while", &cond)) != 0 ||
        (rv = jc_emit(c, LC_OP_WHILE, cond, max, path, &head)) != 0 ||
        (rv = body(c, obj, path, "steps", true, true)) != 0)
        return rv;
    return close_loop(c, head, path);
}

/* "${name}" or "name": a variable's name. */
static int var_ref(jc_t *c, json_t *v, const char *path, const char *key, uint32_t *slot)
{
    char name[72];
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    size_t len = strlen(s);
    if (len > 3 && s[0] == '$' && s[1] == '{' && s[len - 1] == '}') {
        s += 2;
        len -= 3;
    }
    if (len == 0 || len >= sizeof name || memchr(s, '.', len) != NULL || memchr(s, '$', len))
        return lc_jp_fail(&c->jp, path, key, "expected a variable's name");
    memcpy(name, s, len);
    name[len] = '\0';
    return jc_var(c, name, path, slot);
}

static int step_foreach(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"foreach", "as", "steps", NULL};
    uint32_t list, as, head;
    int rv;
    if ((rv = lc_jp_fields(&c->jp, obj, path, fields)) != 0 ||
        (rv = var_ref(c, json_object_get(obj, "foreach"), path, "foreach", &list)) != 0 ||
        (rv = var_ref(c, json_object_get(obj, "as"), path, "as", &as)) != 0)
        return rv;
    if (list == as)
        return lc_jp_fail(&c->jp, path, "as", "must differ from the list it walks");
    if ((rv = jc_emit(c, LC_OP_FOREACH, list, as, path, &head)) != 0 ||
        (rv = body(c, obj, path, "steps", true, true)) != 0)
        return rv;
    return close_loop(c, head, path);
}

static int random_branch(jc_t *c, json_t *b, const char *path, uint64_t *total, uint32_t *jmp)
{
    static const char *const fields[] = {"weight", "steps", NULL};
    uint32_t weight = 1;
    int rv;
    if (!json_is_object(b))
        return lc_jp_fail(&c->jp, path, NULL, "expected {\"weight\": n, \"steps\": [...]}");
    if ((rv = lc_jp_fields(&c->jp, b, path, fields)) != 0 ||
        (rv = lc_jp_uint(&c->jp, b, path, "weight", 1, 1000000, &weight)) != 0)
        return rv;
    *total += weight;
    lc_program_t *p = c->prog;
    if ((rv = jc_grow(c, (void **)&p->branches, &c->cap_branches, p->n_branches,
                      sizeof *p->branches)) != 0)
        return rv;
    p->branches[p->n_branches++] = (lc_branch_t){.cum_weight = *total, .target = here(c)};
    if ((rv = body(c, b, path, "steps", true, false)) != 0)
        return rv;
    return jc_emit(c, LC_OP_JMP, 0, 0, path, jmp);
}

static int step_random(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"random", NULL};
    char sub[JPATH_MAX];
    json_t *branches = json_object_get(obj, "random");
    uint32_t head, jumps[64];
    uint64_t total = 0;
    size_t n = json_array_size(branches);
    int rv = lc_jp_fields(&c->jp, obj, path, fields);
    if (rv == 0 && (!json_is_array(branches) || n == 0 || n > 64))
        rv = lc_jp_fail(&c->jp, path, "random", "expected 1 to 64 weighted branches");
    if (rv != 0 || (rv = jc_emit(c, LC_OP_RAND, (uint32_t)c->prog->n_branches, (uint32_t)n, path,
                                 &head)) != 0)
        return rv;
    for (size_t i = 0; i < n; i++) {
        jc_path(sub, "%s.random[%zu]", path, i);
        if ((rv = random_branch(c, json_array_get(branches, i), sub, &total, &jumps[i])) != 0)
            return rv;
    }
    for (size_t i = 0; i < n; i++)
        c->prog->ops[jumps[i]].target = here(c);
    return 0;
}

static int step_group(jc_t *c, json_t *obj, const char *path)
{
    static const char *const fields[] = {"group", "steps", NULL};
    json_t *name = json_object_get(obj, "group");
    uint32_t g;
    int rv = lc_jp_fields(&c->jp, obj, path, fields);
    if (rv == 0 && (!json_is_string(name) || json_string_length(name) == 0 ||
                    json_string_length(name) > 128))
        rv = lc_jp_fail(&c->jp, path, "group", "expected the group's name (1 to 128 characters)");
    if (rv == 0)
        rv = lc_jp_controls(&c->jp, path, "group", "", json_string_value(name),
                            json_string_length(name));
    if (rv != 0 || (rv = jc_group(c, json_string_value(name), path, &g)) != 0 ||
        (rv = jc_emit(c, LC_OP_GROUP, g, 0, path, NULL)) != 0 ||
        (rv = body(c, obj, path, "steps", true, true)) != 0)
        return rv;
    return jc_emit(c, LC_OP_GROUP_END, g, 0, path, NULL);
}

static int step_exit(jc_t *c, json_t *v, const char *path)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (strcmp(s, "iteration") == 0)
        return jc_emit(c, LC_OP_EXIT, LC_EXIT_ITERATION, 0, path, NULL);
    if (strcmp(s, "user") == 0)
        return jc_emit(c, LC_OP_EXIT, LC_EXIT_USER, 0, path, NULL);
    return lc_jp_fail(&c->jp, path, "exit", "expected \"iteration\" or \"user\"");
}

/* The one discriminating key of a step. */
static const char *step_kind(jc_t *c, json_t *obj, const char *path, int *rv)
{
    const char *kind = NULL;
    for (size_t i = 0; step_kinds[i] != NULL; i++) {
        if (json_object_get(obj, step_kinds[i]) == NULL)
            continue;
        if (kind != NULL) {
            *rv = lc_jp_fail(&c->jp, path, NULL, "a step has one of path, think_ms, set, feed, "
                                                 "if, repeat, while, foreach, random, group, exit "
                                                 "or lua; this one has both %s and %s",
                             kind, step_kinds[i]);
            return NULL;
        }
        kind = step_kinds[i];
    }
    if (kind == NULL)
        *rv = lc_jp_fail(&c->jp, path, NULL, "expected a step: an object with path (a request), "
                                             "think_ms, set, feed, if, repeat, while, foreach, "
                                             "random, group, exit or lua");
    return kind;
}

/* Steps whose one key is their kind. */
static int single_key(jc_t *c, json_t *obj, const char *path, const char *kind)
{
    if (json_object_size(obj) == 1)
        return 0;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) if (strcmp(key, kind) != 0) return lc_jp_fail(
        &c->jp, path, key, "unknown field (a %s step has only %s)", kind, kind);
    return 0;
}

static int step(jc_t *c, json_t *obj, const char *path)
{
    int rv = 0;
    if (!json_is_object(obj))
        return lc_jp_fail(&c->jp, path, NULL, "expected a step (an object)");
    const char *kind = step_kind(c, obj, path, &rv);
    if (kind == NULL)
        return rv;
    json_t *v = json_object_get(obj, kind);
    if (strcmp(kind, "path") == 0)
        return jc_request(c, obj, path);
    if (strcmp(kind, "lua") == 0)
        return jc_lua_step(c, obj, path);
    if (strcmp(kind, "if") == 0)
        return step_if(c, obj, path);
    if (strcmp(kind, "repeat") == 0)
        return step_repeat(c, obj, path);
    if (strcmp(kind, "while") == 0)
        return step_while(c, obj, path);
    if (strcmp(kind, "foreach") == 0)
        return step_foreach(c, obj, path);
    if (strcmp(kind, "random") == 0)
        return step_random(c, obj, path);
    if (strcmp(kind, "group") == 0)
        return step_group(c, obj, path);
    if ((rv = single_key(c, obj, path, kind)) != 0)
        return rv;
    if (strcmp(kind, "think_ms") == 0)
        return step_think(c, v, path);
    if (strcmp(kind, "set") == 0)
        return step_set(c, v, path);
    if (strcmp(kind, "feed") == 0)
        return step_feed(c, v, path);
    return step_exit(c, v, path);
}

/* obj[key] as nested steps; frame: a loop or group, which holds a user's frame. */
static int body(jc_t *c, json_t *obj, const char *parent, const char *key, bool required,
                bool frame)
{
    char path[JPATH_MAX];
    json_t *steps = json_object_get(obj, key);
    jc_path(path, "%s.%s", parent, key);
    if (steps == NULL && !required)
        return 0;
    if (!json_is_array(steps) || (required && json_array_size(steps) == 0))
        return lc_jp_fail(&c->jp, parent, key, "expected a non-empty array of steps");
    if (c->depth >= NESTING_MAX)
        return lc_jp_fail(&c->jp, parent, key, "steps nested more than %u deep", NESTING_MAX);
    unsigned frames = c->frames + (frame ? 1u : 0u);
    if (frames > LC_JOURNEY_DEPTH_MAX)
        return lc_jp_fail(&c->jp, parent, key, "more than %u loops and groups nested",
                          LC_JOURNEY_DEPTH_MAX);
    unsigned saved = c->frames;
    c->depth++;
    c->frames = frames;
    int rv = jc_steps(c, steps, path);
    c->depth--;
    c->frames = saved;
    return rv;
}

int jc_steps(jc_t *c, json_t *steps, const char *parent)
{
    char path[JPATH_MAX];
    for (size_t i = 0; i < json_array_size(steps); i++) {
        jc_path(path, "%s[%zu]", parent, i);
        int rv = step(c, json_array_get(steps, i), path);
        if (rv != 0)
            return rv;
    }
    return 0;
}
