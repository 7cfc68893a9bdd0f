/* stats.h — any thread (one owner per block): per-run, per-endpoint counters and
 * latency histograms, recorded by one engine, merged by the control thread,
 * built into a StatsBatch. */
#ifndef WORKER_STATS_H
#define WORKER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.pb-c.h"
#include "lc_hist.h"

/* Why a request failed; the names are the "kind" of ErrorCount. */
enum worker_err_kind {
    WORKER_ERR_CONNECT_REFUSED,
    WORKER_ERR_CONNECT_TIMEOUT,
    WORKER_ERR_RESET,
    WORKER_ERR_TIMEOUT,
    WORKER_ERR_TLS,
    WORKER_ERR_PARSE,
    WORKER_ERR_STATUS,
    WORKER_ERR_EXPECT,
    WORKER_ERR_ABORTED,
    WORKER_ERR_EXTRACT,  /* journeys: a required value was not in the response */
    WORKER_ERR_TEMPLATE, /* journeys: a request could not be rendered (unset variable, CR/LF) */
    WORKER_ERR_REDIRECT, /* journeys: a redirect to another origin, or too many */
    WORKER_ERR_SCRIPT,   /* lua steps: a script error, its memory cap or its CPU deadline */
    WORKER_ERR_CHECK,    /* lua steps: a check(cond, name) whose cond was false */
    WORKER_ERR_H2_REFUSED, /* HTTP/2: not processed (GOAWAY below its stream, REFUSED_STREAM) */
    WORKER_ERR_H2_RESET, /* HTTP/2: the server reset the stream (RST_STREAM) */
    WORKER_ERR_KINDS
};

const char *worker_err_kind_name(int kind);

#define WORKER_KIND_OK (-1)            /* the outcome of a successful request */
#define WORKER_NO_LATENCY UINT64_MAX   /* a failure without a complete response */

typedef struct worker_ep_stats_s {
    uint64_t count;    /* requests finished: successes + failures */
    uint64_t failures;
    uint64_t bytes;    /* response bytes received */
    uint64_t errors[WORKER_ERR_KINDS];
    lc_hist_t hist;    /* latency (µs) of every request that got a complete response */
} worker_ep_stats_t;

/* Scripts' check(cond, name), counted per name (the failures are also errors of kind
 * "check" on the step's endpoint, which is what reaches the master). */
#define WORKER_CHECKS_MAX 64u      /* names per block; the rest are counted as "(other)" */
#define WORKER_CHECK_NAME_MAX 64u  /* bytes of a name kept */
typedef struct worker_check_s {
    char name[WORKER_CHECK_NAME_MAX + 1];
    uint64_t passed, failed;
} worker_check_t;
typedef struct worker_checks_s {
    size_t n;
    worker_check_t c[WORKER_CHECKS_MAX];
} worker_checks_t;

/* The first message of an error per (endpoint, kind) in a block ("why did my script
 * fail"): the control thread sends each (endpoint, kind) once per run. */
#define WORKER_NOTES_MAX 16u     /* per block; later (endpoint, kind)s are not noted */
#define WORKER_NOTE_MAX 200u     /* bytes of a message kept (cut at a UTF-8 boundary) */
typedef struct worker_note_s {
    uint32_t ep;
    uint8_t kind;
    char msg[WORKER_NOTE_MAX + 1]; /* printable: control characters became spaces */
} worker_note_t;
typedef struct worker_notes_s {
    size_t n;
    worker_note_t e[WORKER_NOTES_MAX];
} worker_notes_t;

typedef struct worker_stats_s {
    uint64_t dropped;         /* open model: starts that found no free user */
    uint64_t tls_handshakes;  /* full TLS handshakes completed */
    uint64_t tls_resumed;     /* TLS handshakes that resumed a session */
    worker_checks_t *checks;  /* NULL until a script checks something */
    worker_notes_t *notes;    /* NULL until an error with a message */
    size_t n;                 /* endpoints */
    worker_ep_stats_t ep[];
} worker_stats_t;

/* Name and method of an endpoint, for encoding. */
typedef struct worker_endpoint_s {
    const char *name;
    const char *method;
} worker_endpoint_t;

/* A zeroed block for n endpoints, or NULL when out of memory. */
worker_stats_t *worker_stats_new(size_t n);
void worker_stats_free(worker_stats_t *s);
void worker_stats_reset(worker_stats_t *s);

/* One finished request: a success when kind is WORKER_KIND_OK; latency is
 * recorded unless it is WORKER_NO_LATENCY. */
void worker_stats_record(worker_stats_t *s, size_t ep, int kind, uint64_t latency_us,
                         uint64_t bytes);
/* A journey's iteration or group that took us: counted, a failure unless ok. */
void worker_stats_record_timer(worker_stats_t *s, size_t ep, bool ok, uint64_t us);
/* An error of kind on series ep that is not a request of its own (a step that could not
 * run): the error count only. */
void worker_stats_error(worker_stats_t *s, size_t ep, int kind);
/* An error of kind on series ep, as worker_stats_error, whose message is kept when it is
 * the block's first for (ep, kind) (printf-style; out of memory, only counted). */
void worker_stats_error_note(worker_stats_t *s, size_t ep, int kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The message noted for (ep, kind), or NULL. */
const char *worker_stats_note(const worker_stats_t *s, size_t ep, int kind);
/* Drops the notes whose (ep, kind) bit is set in sent (n_eps * WORKER_ERR_KINDS bits) and
 * sets the bits of the rest: what a run has already reported is not sent again. */
void worker_stats_notes_once(worker_stats_t *s, uint8_t *sent);
/* One check(cond, name) of a script: passed or not. Out of memory, it is not counted. */
void worker_stats_check(worker_stats_t *s, const char *name, size_t len, bool passed);
/* dst += src (same endpoint count). */
void worker_stats_merge(worker_stats_t *dst, const worker_stats_t *src);
/* Sum of the first n endpoints (for totals: the request series, see
 * worker_plan_requests). */
void worker_stats_total(const worker_stats_t *s, size_t n, worker_ep_stats_t *out);

typedef struct worker_batch_meta_s {
    uint64_t run;
    const char *worker_id;
    uint64_t seq;
    uint32_t interval;
    uint32_t users;
    bool final;
    uint64_t requests;      /* sum of the endpoint counts (kept by the outbox, not encoded) */
    uint64_t lost_batches;  /* batches of the run lost to outbox overflow since the last report */
    uint64_t lost_requests; /* the requests they counted */
} worker_batch_meta_t;

/* Encodes s as one StatsBatch frame (Envelope, length-prefixed) into a
 * malloc'd buffer. Endpoints with no request are left out. Returns 0 or an
 * LC_ error. */
int worker_stats_encode_batch(const worker_stats_t *s, const worker_endpoint_t *eps,
                              const worker_batch_meta_t *meta, uint8_t **out, size_t *out_len);

#endif
