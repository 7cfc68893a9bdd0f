/* trace.h — engine thread: the dry run's readable trace (loadworker --local --trace): each
 * request line, status, latency, extracted value (secrets redacted) and error of the one
 * traced user, and whether it is done. */
#ifndef WORKER_TRACE_H
#define WORKER_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lc_value.h"

typedef struct worker_trace_s {
    FILE *out;
    uint64_t t0_ns;            /* times in the trace count from here */
    atomic_bool done;          /* the traced user ended: the dry run can stop */
} worker_trace_t;

/* The values of the traced user's secret feeder columns (lc_feeder_t's secret): wherever the
 * trace prints a request or a value, each occurrence of one of them, as it is or
 * percent-encoded (the url filter's, or a form's), is printed as "***". */
#define WORKER_TRACE_SECRETS_MAX 64
typedef struct worker_trace_secrets_s {
    lc_value_t v[WORKER_TRACE_SECRETS_MAX]; /* borrowed from the session */
    size_t n;
    bool overflow; /* the user holds more: whatever would show them prints as "***" whole */
} worker_trace_secrets_t;

void worker_trace_init(worker_trace_t *t, FILE *out);

/* "12.3 ms  GET /items?n=2" (the request line of what is sent; hop > 0: a redirect), with
 * secrets (may be NULL) masked. */
void worker_trace_request(worker_trace_t *t, const char *req, size_t len, unsigned hop,
                          const worker_trace_secrets_t *secrets);
/* "        -> 200 in 0.41 ms, 311 bytes" or "-> error reset". */
void worker_trace_response(worker_trace_t *t, int status, uint64_t latency_us, uint64_t bytes,
                           const char *error);
/* "        token = \"t1.alice…\"" (or <redacted>, or "not found"), with secrets (may be
 * NULL) masked: a value taken from a secret column's echo prints as "***". */
void worker_trace_value(worker_trace_t *t, const char *name, const lc_value_t *v, bool found,
                        const worker_trace_secrets_t *secrets);
/* A line of its own: "journey buyer: on_start", "iteration 1 done in 55 ms", …. */
void worker_trace_note(worker_trace_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether a variable's value is kept out of traces (its name says secret, password or
 * passwd); feeder columns follow lc_feeder_t's secret instead. */
bool worker_trace_redacts(const char *name);

#endif
