/* stats.c — endpoint counters: record, merge, build a StatsBatch (its envelope: link_send.c). */
#include "stats.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_protocol.h"
#include "lc_utf8.h"
#include "link_send.h"

/* The names are the protocol's (lc_protocol.h), in the same order. */
_Static_assert(WORKER_ERR_KINDS == LC_PROTOCOL_ERROR_KINDS, "one name per error kind");

const char *worker_err_kind_name(int kind)
{
    return kind >= 0 && kind < WORKER_ERR_KINDS ? lc_protocol_error_kinds[kind] : "unknown";
}

worker_stats_t *worker_stats_new(size_t n)
{
    worker_stats_t *s = malloc(sizeof *s + n * sizeof s->ep[0]);
    if (s == NULL)
        return NULL;
    s->n = n;
    s->checks = NULL;
    s->notes = NULL;
    worker_stats_reset(s);
    return s;
}

void worker_stats_free(worker_stats_t *s)
{
    if (s != NULL) {
        free(s->checks);
        free(s->notes);
    }
    free(s);
}

void worker_stats_reset(worker_stats_t *s)
{
    s->dropped = s->tls_handshakes = s->tls_resumed = 0;
    if (s->checks != NULL)
        s->checks->n = 0;
    if (s->notes != NULL)
        s->notes->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        worker_ep_stats_t *e = &s->ep[i];
        e->count = e->failures = e->bytes = 0;
        memset(e->errors, 0, sizeof e->errors);
        lc_hist_init(&e->hist);
    }
}

void worker_stats_record(worker_stats_t *s, size_t ep, int kind, uint64_t latency_us,
                         uint64_t bytes)
{
    assert(ep < s->n);
    assert(kind == WORKER_KIND_OK || (kind >= 0 && kind < WORKER_ERR_KINDS));
    worker_ep_stats_t *e = &s->ep[ep];
    e->count++;
    e->bytes += bytes;
    if (kind >= 0) {
        e->failures++;
        e->errors[kind]++;
    }
    if (latency_us != UINT64_MAX)
        lc_hist_record(&e->hist, latency_us);
}

static void ep_merge(worker_ep_stats_t *d, const worker_ep_stats_t *s)
{
    d->count += s->count;
    d->failures += s->failures;
    d->bytes += s->bytes;
    for (int k = 0; k < WORKER_ERR_KINDS; k++)
        d->errors[k] += s->errors[k];
    lc_hist_merge(&d->hist, &s->hist);
}

void worker_stats_record_timer(worker_stats_t *s, size_t ep, bool ok, uint64_t us)
{
    assert(ep < s->n);
    worker_ep_stats_t *e = &s->ep[ep];
    e->count++;
    e->failures += ok ? 0 : 1;
    lc_hist_record(&e->hist, us);
}

void worker_stats_error(worker_stats_t *s, size_t ep, int kind)
{
    assert(ep < s->n && kind >= 0 && kind < WORKER_ERR_KINDS);
    s->ep[ep].errors[kind]++;
}

/* The note slot for (ep, kind): its existing one, a new one, or NULL (noted already, or
 * no room). */
static worker_note_t *note_slot(worker_stats_t *s, size_t ep, int kind)
{
    if (s->notes == NULL && (s->notes = calloc(1, sizeof *s->notes)) == NULL)
        return NULL;
    worker_notes_t *ns = s->notes;
    for (size_t i = 0; i < ns->n; i++)
        if (ns->e[i].ep == ep && ns->e[i].kind == kind)
            return NULL;
    if (ns->n == WORKER_NOTES_MAX)
        return NULL;
    worker_note_t *n = &ns->e[ns->n++];
    n->ep = (uint32_t)ep;
    n->kind = (uint8_t)kind;
    return n;
}

static void note_set(worker_note_t *n, const char *msg, size_t len)
{
    lc_utf8_clean(n->msg, sizeof n->msg, msg, len);
}

void worker_stats_error_note(worker_stats_t *s, size_t ep, int kind, const char *fmt, ...)
{
    worker_stats_error(s, ep, kind);
    if (s->notes != NULL && s->notes->n == WORKER_NOTES_MAX)
        return; /* the common case of an error every request: no formatting */
    worker_note_t *n = note_slot(s, ep, kind);
    if (n == NULL)
        return;
    char text[WORKER_NOTE_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    note_set(n, text, len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1);
}

static void notes_merge(worker_stats_t *dst, const worker_notes_t *src)
{
    for (size_t i = 0; src != NULL && i < src->n; i++) {
        worker_note_t *n = note_slot(dst, src->e[i].ep, src->e[i].kind);
        if (n != NULL)
            memcpy(n->msg, src->e[i].msg, sizeof n->msg);
    }
}

void worker_stats_notes_once(worker_stats_t *s, uint8_t *sent)
{
    assert(sent != NULL);
    worker_notes_t *ns = s->notes;
    size_t kept = 0;
    for (size_t i = 0; ns != NULL && i < ns->n; i++) {
        size_t bit = (size_t)ns->e[i].ep * WORKER_ERR_KINDS + ns->e[i].kind;
        if (sent[bit / 8] & (1u << (bit % 8)))
            continue;
        sent[bit / 8] |= (uint8_t)(1u << (bit % 8));
        ns->e[kept++] = ns->e[i];
    }
    if (ns != NULL)
        ns->n = kept;
}

/* The counters of check name (created; past the table's room, "(other)"), or NULL. */
static worker_check_t *check_of(worker_stats_t *s, const char *name, size_t len)
{
    static const char other[] = "(other)";
    if (s->checks == NULL && (s->checks = calloc(1, sizeof *s->checks)) == NULL)
        return NULL;
    worker_checks_t *cs = s->checks;
    if (len > WORKER_CHECK_NAME_MAX)
        len = WORKER_CHECK_NAME_MAX;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < cs->n; i++)
            if (strlen(cs->c[i].name) == len && memcmp(cs->c[i].name, name, len) == 0)
                return &cs->c[i];
        if (cs->n + (pass == 0 ? 1u : 0u) < WORKER_CHECKS_MAX) {
            worker_check_t *c = &cs->c[cs->n++];
            memcpy(c->name, name, len);
            c->name[len] = '\0';
            c->passed = c->failed = 0;
            return c;
        }
        name = other; /* the last slot is kept for it */
        len = sizeof other - 1;
    }
    return NULL;
}

void worker_stats_check(worker_stats_t *s, const char *name, size_t len, bool passed)
{
    assert(s != NULL && (name != NULL || len == 0));
    /* A script's name is any bytes: kept as the text the master accepts. */
    char clean[WORKER_CHECK_NAME_MAX + 1];
    size_t n = lc_utf8_clean(clean, sizeof clean, name != NULL ? name : "", len);
    worker_check_t *c = check_of(s, clean, n);
    if (c != NULL && passed)
        c->passed++;
    else if (c != NULL)
        c->failed++;
}

static void checks_merge(worker_stats_t *dst, const worker_checks_t *src)
{
    for (size_t i = 0; src != NULL && i < src->n; i++) {
        worker_check_t *c = check_of(dst, src->c[i].name, strlen(src->c[i].name));
        if (c != NULL) {
            c->passed += src->c[i].passed;
            c->failed += src->c[i].failed;
        }
    }
}

void worker_stats_merge(worker_stats_t *dst, const worker_stats_t *src)
{
    size_t n = dst->n < src->n ? dst->n : src->n;
    dst->dropped += src->dropped;
    dst->tls_handshakes += src->tls_handshakes;
    dst->tls_resumed += src->tls_resumed;
    for (size_t i = 0; i < n; i++)
        ep_merge(&dst->ep[i], &src->ep[i]);
    checks_merge(dst, src->checks);
    notes_merge(dst, src->notes);
}

void worker_stats_total(const worker_stats_t *s, size_t n, worker_ep_stats_t *out)
{
    assert(n <= s->n);
    memset(out, 0, sizeof *out);
    lc_hist_init(&out->hist);
    for (size_t i = 0; i < n; i++)
        ep_merge(out, &s->ep[i]);
}

/* Heap parts of a batch under construction, released in one place. */
typedef struct batch_build_s {
    Lc__StatsBatch batch;
    Lc__EndpointStats *eps;
    Lc__EndpointStats **ep_ptrs;
    Lc__ErrorCount *errs;
    Lc__ErrorCount **err_ptrs;
    Lc__CheckCount *checks;
    Lc__CheckCount **check_ptrs;
} batch_build_t;

static void build_free(batch_build_t *b)
{
    for (size_t i = 0; i < b->batch.n_endpoints; i++)
        free(b->eps[i].hist.data);
    free(b->eps);
    free(b->ep_ptrs);
    free(b->errs);
    free(b->err_ptrs);
    free(b->checks);
    free(b->check_ptrs);
}

const char *worker_stats_note(const worker_stats_t *s, size_t ep, int kind)
{
    for (size_t i = 0; s->notes != NULL && i < s->notes->n; i++)
        if (s->notes->e[i].ep == ep && s->notes->e[i].kind == kind)
            return s->notes->e[i].msg;
    return NULL;
}

/* The noted message of (ep, kind), or "" (protobuf-c's empty string: not sent). */
static char *note_of(const worker_stats_t *s, size_t ep, int kind)
{
    const char *msg = worker_stats_note(s, ep, kind);
    return (char *)(msg != NULL ? msg : protobuf_c_empty_string);
}

static int build_endpoint(batch_build_t *b, const worker_stats_t *s, size_t i,
                          const worker_endpoint_t *ep)
{
    const worker_ep_stats_t *e = &s->ep[i];
    Lc__EndpointStats *out = &b->eps[b->batch.n_endpoints];
    lc__endpoint_stats__init(out);
    out->name = (char *)ep->name;
    out->method = (char *)ep->method;
    out->count = e->count;
    out->failures = e->failures;
    out->bytes = e->bytes;
    size_t len = 0;
    int rv = lc_hist_encode(&e->hist, &out->hist.data, &len);
    if (rv != 0)
        return rv;
    out->hist.len = len;
    b->ep_ptrs[b->batch.n_endpoints++] = out;
    for (int k = 0; k < WORKER_ERR_KINDS; k++) {
        if (e->errors[k] == 0)
            continue;
        Lc__ErrorCount *ec = &b->errs[b->batch.n_errors];
        lc__error_count__init(ec);
        ec->endpoint = (char *)ep->name;
        ec->kind = (char *)worker_err_kind_name(k);
        ec->count = e->errors[k];
        ec->message = note_of(s, i, k);
        b->err_ptrs[b->batch.n_errors++] = ec;
    }
    return 0;
}

static int build_checks(batch_build_t *b, const worker_checks_t *cs)
{
    if (cs == NULL || cs->n == 0)
        return 0;
    b->checks = calloc(cs->n, sizeof *b->checks);
    b->check_ptrs = calloc(cs->n, sizeof *b->check_ptrs);
    if (b->checks == NULL || b->check_ptrs == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < cs->n; i++) {
        Lc__CheckCount *c = &b->checks[i];
        lc__check_count__init(c);
        c->name = (char *)cs->c[i].name;
        c->passed = cs->c[i].passed;
        c->failed = cs->c[i].failed;
        b->check_ptrs[i] = c;
    }
    b->batch.checks = b->check_ptrs;
    b->batch.n_checks = cs->n;
    return 0;
}

static bool has_errors(const worker_ep_stats_t *e)
{
    for (size_t k = 0; k < WORKER_ERR_KINDS; k++)
        if (e->errors[k] != 0)
            return true;
    return false;
}

static int build_batch(batch_build_t *b, const worker_stats_t *s, const worker_endpoint_t *eps,
                       const worker_batch_meta_t *meta)
{
    memset(b, 0, sizeof *b);
    lc__stats_batch__init(&b->batch);
    b->batch.run = meta->run;
    b->batch.worker_id = (char *)(meta->worker_id ? meta->worker_id : "");
    b->batch.seq = meta->seq;
    b->batch.interval = meta->interval;
    b->batch.final = meta->final;
    b->batch.dropped = s->dropped;
    b->batch.tls_handshakes = s->tls_handshakes;
    b->batch.tls_resumed = s->tls_resumed;
    b->batch.users = meta->users;
    b->batch.lost_batches = meta->lost_batches;
    b->batch.lost_requests = meta->lost_requests;
    size_t n = s->n ? s->n : 1;
    b->eps = calloc(n, sizeof *b->eps);
    b->ep_ptrs = calloc(n, sizeof *b->ep_ptrs);
    b->errs = calloc(n * WORKER_ERR_KINDS, sizeof *b->errs);
    b->err_ptrs = calloc(n * WORKER_ERR_KINDS, sizeof *b->err_ptrs);
    if (!b->eps || !b->ep_ptrs || !b->errs || !b->err_ptrs)
        return LC_ENOMEM;
    b->batch.endpoints = b->ep_ptrs;
    b->batch.errors = b->err_ptrs;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ep[i].count == 0 && !has_errors(&s->ep[i]))
            continue;
        int rv = build_endpoint(b, s, i, &eps[i]);
        if (rv != 0)
            return rv;
    }
    return build_checks(b, s->checks);
}

int worker_stats_encode_batch(const worker_stats_t *s, const worker_endpoint_t *eps,
                              const worker_batch_meta_t *meta, uint8_t **out, size_t *out_len)
{
    batch_build_t b;
    int rv = build_batch(&b, s, eps, meta);
    if (rv == 0)
        rv = worker_link_encode_stats(&b.batch, out, out_len);
    build_free(&b);
    return rv;
}
