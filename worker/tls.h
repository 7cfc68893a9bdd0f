/* tls.h — engine thread (the per-run context: control thread): HTTPS for the engine,
 * a worker_transport_ops_t running OpenSSL on the connection's uv stream (tls_conn.c,
 * through the BIO of tls_bio.h), with one SSL_CTX per run and one resumable session per
 * engine and run. */
#ifndef WORKER_TLS_H
#define WORKER_TLS_H

#include <stddef.h>

#include "http_conn.h"
#include "lc_scenario.h"
#include "stats.h"

/* The engine index bound of a run's per-engine slots (--threads accepts at
 * most this many). */
#define WORKER_TLS_MAX_ENGINES 1024u

/* A run's TLS client: the SSL_CTX (CA, verification, ALPN), the host to
 * verify and to send as SNI, and one slot per engine. Built with the plan,
 * read-only afterwards except for each engine's own slot. */
typedef struct worker_tls_s worker_tls_t;

/* Opens the operator's directory of CA files (--tls-ca-dir) that a
 * scenario's tls.ca_file names a file in; NULL closes it (then every
 * ca_file is refused). Call before any run is assigned. Returns 0 or LC_EIO. */
int worker_tls_ca_dir_set(const char *dir, char *errmsg, size_t errlen);

/* Builds the client of one https origin of a scenario, whose host (a name, or an IP
 * literal) is sent as SNI and verified: verification on unless
 * tls.insecure, CAs from tls.ca_pem, from tls.ca_file in the CA directory,
 * or the system's default paths. Returns 0, LC_ENOMEM, or LC_EINVAL with
 * errmsg (any ca_file that cannot be used gets one message that does not say
 * whether the file exists; the reason is logged). */
int worker_tls_new(worker_tls_t **out, const lc_scenario_t *sc, const char *host, char *errmsg,
                   size_t errlen);
/* Frees the context and every engine's session; no connection may use it. */
void worker_tls_free(worker_tls_t *t);

/* Makes c (just initialized, not connected) speak TLS with t, from engine
 * `engine`; handshake counts go to *stats (the engine's current counters of
 * the run, which may be swapped between handshakes). Halves c's share of the
 * engine read buffer: the second half receives plaintext. */
void worker_tls_attach(worker_conn_t *c, worker_tls_t *t, unsigned engine,
                       worker_stats_t *const *stats);

extern const worker_transport_ops_t worker_transport_tls;

#endif
