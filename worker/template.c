/* template.c — ${…} template compilation and rendering. */
#include "template.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "rng.h"

static int add_part(worker_tpl_t *t, size_t *cap, const worker_tpl_part_t *p)
{
    if (t->n_parts == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        worker_tpl_part_t *parts = realloc(t->parts, ncap * sizeof *parts);
        if (parts == NULL)
            return LC_ENOMEM;
        t->parts = parts;
        *cap = ncap;
    }
    t->parts[t->n_parts++] = *p;
    return 0;
}

/* Parses "rand(a,b)" (len bytes at s) into lo and hi. */
static int parse_rand(const char *s, size_t len, int64_t *lo, int64_t *hi)
{
    char tmp[64], *end;
    if (len < 8 || len >= sizeof tmp || memcmp(s, "rand(", 5) != 0 || s[len - 1] != ')')
        return LC_EINVAL;
    memcpy(tmp, s + 5, len - 6);
    tmp[len - 6] = '\0';
    errno = 0;
    long long a = strtoll(tmp, &end, 10);
    if (end == tmp || *end != ',' || errno != 0)
        return LC_EINVAL;
    const char *second = end + 1;
    long long b = strtoll(second, &end, 10);
    if (end == second || *end != '\0' || errno != 0 || a > b)
        return LC_EINVAL;
    *lo = a;
    *hi = b;
    return 0;
}

/* Classifies the template body s[0..len) into p. */
static int classify(const char *s, size_t len, worker_tpl_part_t *p)
{
    static const struct {
        const char *name;
        enum worker_tpl_kind kind;
    } plain[] = {{"user_id", WORKER_TPL_USER_ID},
                 {"iteration", WORKER_TPL_ITERATION},
                 {"uuid", WORKER_TPL_UUID}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (strlen(plain[i].name) == len && memcmp(plain[i].name, s, len) == 0) {
            p->kind = plain[i].kind;
            return 0;
        }
    }
    p->kind = WORKER_TPL_RAND;
    return parse_rand(s, len, &p->lo, &p->hi);
}

int worker_tpl_compile(worker_tpl_t *t, const char *src, char *errmsg, size_t errlen)
{
    size_t cap = 0, pos = 0, lit = 0, n = strlen(src);
    memset(t, 0, sizeof *t);
    if ((t->text = strdup(src)) == NULL)
        return LC_ENOMEM;
    while (pos < n) {
        const char *open = strstr(src + pos, "${");
        if (open == NULL)
            break;
        const char *close = strchr(open + 2, '}');
        size_t at = (size_t)(open - src);
        worker_tpl_part_t p = {.kind = WORKER_TPL_LITERAL, .off = lit, .len = at - lit};
        if (close == NULL) {
            snprintf(errmsg, errlen, "unterminated template %.32s", open);
            goto fail;
        }
        if (p.len > 0 && add_part(t, &cap, &p) != 0)
            goto nomem;
        memset(&p, 0, sizeof p);
        if (classify(open + 2, (size_t)(close - open - 2), &p) != 0) {
            snprintf(errmsg, errlen, "unknown template ${%.*s}", (int)(close - open - 2), open + 2);
            goto fail;
        }
        if (add_part(t, &cap, &p) != 0)
            goto nomem;
        t->dynamic = true;
        pos = lit = (size_t)(close - src) + 1;
    }
    worker_tpl_part_t last = {.kind = WORKER_TPL_LITERAL, .off = lit, .len = n - lit};
    if (last.len > 0 && add_part(t, &cap, &last) != 0)
        goto nomem;
    return 0;
nomem:
    worker_tpl_free(t);
    return LC_ENOMEM;
fail:
    worker_tpl_free(t);
    return LC_EINVAL;
}

void worker_tpl_free(worker_tpl_t *t)
{
    free(t->text);
    free(t->parts);
    memset(t, 0, sizeof *t);
}

static int render_uuid(uint64_t *rng, lc_buf_t *out)
{
    uint64_t hi = worker_rng_next(rng), lo = worker_rng_next(rng);
    hi = (hi & ~0xF000ULL) | 0x4000ULL;              /* version 4 */
    lo = (lo & ~(3ULL << 62)) | (2ULL << 62);         /* RFC 4122 variant */
    return lc_buf_appendf(out, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64
                                   "-%012" PRIx64,
                              hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                              lo & (uint64_t)0xFFFFFFFFFFFFULL);
}

static int render_part(const worker_tpl_t *t, const worker_tpl_part_t *p,
                       const worker_tpl_vars_t *v, lc_buf_t *out)
{
    switch (p->kind) {
    case WORKER_TPL_LITERAL:
        return lc_buf_append(out, t->text + p->off, p->len);
    case WORKER_TPL_USER_ID:
        return lc_buf_appendf(out, "%" PRIu64, v->user_id);
    case WORKER_TPL_ITERATION:
        return lc_buf_appendf(out, "%" PRIu64, v->iteration);
    case WORKER_TPL_RAND: {
        /* Unsigned arithmetic on the offset keeps the full int64 range safe. */
        uint64_t span = (uint64_t)p->hi - (uint64_t)p->lo;
        uint64_t off = worker_rng_range(v->rng, 0, span);
        return lc_buf_appendf(out, "%" PRId64, (int64_t)((uint64_t)p->lo + off));
    }
    case WORKER_TPL_UUID:
        return render_uuid(v->rng, out);
    }
    return LC_EINVAL;
}

int worker_tpl_render(const worker_tpl_t *t, const worker_tpl_vars_t *vars, lc_buf_t *out)
{
    for (size_t i = 0; i < t->n_parts; i++) {
        int rv = render_part(t, &t->parts[i], vars, out);
        if (rv != 0)
            return rv;
    }
    return 0;
}
