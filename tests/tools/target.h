/* target.h — lc_target internals shared by its loop threads, connection handling and counters. */
#ifndef LC_TARGET_H
#define LC_TARGET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "lc_addr.h"
#include "target_app.h"

#define READ_BUF_SIZE (64 * 1024)
#define OUT_BUF_SIZE (64 * 1024) /* also the size of the shared 'x' body buffer */
#define RESP_SIZE_MAX (16ul * 1024 * 1024)
#define PATHS_MAX 1000
#define PATH_SLOTS 2048 /* power of two, comfortably above PATHS_MAX */
#define THREADS_MAX 64
#define LATENCY_MAX_MS 3600000ul
#define RELAXED memory_order_relaxed
/* What one request may carry, whichever protocol brings it. */
#define URL_MAX 4096
#define HEADER_BYTES_MAX (16 * 1024)
#define HEADERS_MAX 64
#define BODY_MAX (16ull * 1024 * 1024)
#define WRITE_HIGH_WATER (4u * 1024 * 1024) /* queued output past which a client is not read */
#define NS_PER_MS 1000000ull
#define H2_STREAMS_DEFAULT 100
#define H2_STREAMS_MAX 1000

typedef struct config_s {
    lc_hostport_t listen;
    unsigned long latency_ms, jitter_ms, stall_at_ms, stall_ms; /* stall_ms 0 = no stall */
    unsigned long status, body_size, threads;
    unsigned long h2_goaway_after, h2_max_streams; /* goaway_after 0 = never */
    const char *port_file;
    bool quiet, http2;
} config_t;

typedef struct target_s target_t;
typedef struct conn_s conn_t; /* private to target_conn.c */

/* One loop thread. Its counters are written only by its own thread but read and reset by the
 * thread answering /__stats, hence atomics; keeping them per engine avoids cache-line bouncing. */
typedef struct engine_s {
    target_t *t;
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_async_t stop;
    pthread_t thread;
    conn_t *conns; /* open connections, closed on shutdown */
    uint64_t rng;
    size_t out_len;
    atomic_uint_fast64_t bytes_in, rejected, conns_now, conns_total;
    /* HTTP/2: connections, request streams, GOAWAYs sent, streams we reset or refused. */
    atomic_uint_fast64_t h2_conns, h2_streams, h2_goaways, h2_reset, h2_refused;
    /* Served requests per path; "requests" is their sum, so the two always agree. */
    atomic_uint_fast64_t by_path[PATH_SLOTS], other;
    char rbuf[READ_BUF_SIZE];
    char out[OUT_BUF_SIZE]; /* responses of one callback, coalesced into one write */
} engine_t;

enum conn_hdr { CONN_HDR_NONE, CONN_HDR_CLOSE, CONN_HDR_KEEPALIVE };
enum resp_kind { RESP_PLAIN, RESP_STATS, RESP_RESET, RESP_REJECT, RESP_APP };
/* ?rst=: HTTP/2 answers the stream with RST_STREAM instead of a response. */
enum resp_rst { RST_NONE, RST_INTERNAL, RST_REFUSED };

/* One response to write, now or once it is due. */
typedef struct resp_s {
    uint8_t kind, conn_hdr, rst;
    bool head, counted;
    int status;
    int slot; /* by_path slot, -1 = "(other)" */
    size_t size;
    char *data; /* RESP_APP: the whole response (size bytes), owned until written or dropped */
} resp_t;

struct target_s {
    config_t cfg;
    unsigned nengines;
    engine_t *engines[THREADS_MAX];
    _Atomic(char *) path_keys[PATH_SLOTS]; /* set once, never changed until exit */
    atomic_uint path_count;
    atomic_uint_fast64_t first_ns; /* arrival of the first served request; 0 = none yet */
    char hdr[3][256];              /* preformatted default response head per conn_hdr */
    size_t hdr_len[3];
    char xbuf[OUT_BUF_SIZE];
    app_key_t app_key; /* signs the app's tokens; read-only once serving */
    uv_loop_t loop;
    uv_signal_t sigterm, sigint;
};

/* ---- target_conn.c ---- */

/* Fills the shared 'x' body buffer and the default response heads; call before serving. */
void conn_prepare_responses(target_t *t);

/* The listener's connection callback; server->data is the engine. */
void conn_on_connection(uv_stream_t *server, int status);

/* Closes at once, dropping (and so not counting) responses still delayed. */
void conn_close(conn_t *c);

/* What target_h2.c needs of a connection: its engine, output appended to the engine's buffer
 * (flushed by conn_flush, or as the buffer fills), whether the socket's queue is past
 * WRITE_HIGH_WATER, the connection's timer, and an orderly end (flush, shutdown, close). */
engine_t *conn_engine(const conn_t *c);
void conn_out(conn_t *c, const char *data, size_t len);
void conn_flush(conn_t *c);
bool conn_backlogged(const conn_t *c);
bool conn_closing(const conn_t *c);
void conn_timer_start(conn_t *c, uint64_t ms);
void conn_end(conn_t *c);

/* ---- target_plan.c: what a request gets, whichever protocol carried it ---- */

/* Reads 1 to 10 decimal digits into OUT: *out; false when s is not that or the value passes max. */
bool parse_digits(const char *s, size_t n, unsigned long max, unsigned long *out);

/* Plans the answer to a request for url (with its query) on route: *r's head and conn_hdr are
 * the caller's; kind, status, size, slot, rst and counted are set here. A control path
 * (/__stats, /__reset) is due now; an app route gets kind RESP_APP for the caller to serve;
 * any other path the plain answer with its query (?status= ?latency_ms= ?size= ?close=1
 * ?rst=) applied. OUT: *due_ns, when to answer in uv_hrtime nanoseconds (0 = now). */
void plan_request(engine_t *e, int method, int route, const char *url, size_t url_len,
                  resp_t *r, uint64_t *due_ns);
/* When an answer planned now is due (--latency-ms, jitter, the stall); override >= 0 replaces
 * the configured latency. 0 means now. */
uint64_t plan_due_time(engine_t *e, long latency_override);

/* ---- target_stats.c ---- */

/* Finds or adds the by_path slot of a path, lock-free so every thread can use one table.
 * Returns -1 once PATHS_MAX distinct paths exist: those are counted into "(other)". */
int stats_path_slot(target_t *t, const char *path, size_t len);

/* Returns the stats as a compact JSON string the caller frees, or NULL when out of memory. */
char *stats_json(target_t *t);

/* Zeroes every counter but the current-connections gauge; distinct paths keep their slots. */
void stats_reset(target_t *t);

/* Turns /__stats and /__reset into their uncounted control responses; false for other paths. */
bool stats_control_request(resp_t *r, const char *path, size_t len, int method);

/* Frees the path keys; only once every engine has stopped. */
void stats_free(target_t *t);

#endif
