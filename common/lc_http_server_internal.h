/* lc_http_server_internal.h — what lc_http_server.c (connections, answers)
 * and lc_http_parse.c (the llhttp callbacks) share; not for other modules. */
#ifndef LC_HTTP_SERVER_INTERNAL_H
#define LC_HTTP_SERVER_INTERNAL_H

#include <llhttp.h>
#include <stdint.h>
#include <uv.h>

#include "lc_buf.h"
#include "lc_http_server.h"

#define BACKLOG 128
#define LINGER_MS 2000     /* how long to drain a peer after a closing response */
#define LOG_EVERY_MS 10000 /* one line per kind of forced close at most this often */
#define IN_CAP (64u << 10) /* stop reading while an exchange is unanswered past this */
#define READ_CHUNK (16u << 10)
#define HDR_NAME_MAX 32 /* longer header names are never ones we keep */
#define FILE_CHUNK (64u << 10) /* a file body is sent this much at a time, */
#define FILE_WRITES 2          /* with this many writes in flight */

/* Response flags: which Connection header, and whether the body is sent (not for HEAD). */
enum { RESP_CLOSE = 1, RESP_KEEP_ALIVE = 2, RESP_HEAD = 4 };

typedef struct conn_s conn_t;

/* What a connection's one timer counts down to. */
enum phase { PH_HEADERS, PH_BODY, PH_HANDLER, PH_SENDING, PH_LINGER };

/* Why connections were closed by force: counted, logged LOG_EVERY_MS at most. */
enum { WHY_HEADERS, WHY_BODY, WHY_SENDING, WHY_FULL, WHY_COUNT };

/* The parts of a request an exchange keeps, in buffers indexed by these. */
enum { B_URL, B_AUTH, B_CTYPE, B_HOST, B_EXPECT, B_BODY, B_COUNT };

struct lc_http_exchange_s {
    conn_t *conn; /* NULL once the connection is gone: answering only frees */
    lc_http_request_t req;
    int flags;        /* RESP_* for the answer */
    int in_hook;      /* with the headers hook: an answer refuses the request */
    unsigned present; /* bit i: header buffer i was seen */
    lc_buf_t bufs[B_COUNT];
};

struct conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer; /* the deadline of `phase` */
    uv_shutdown_t shutdown;
    lc_http_server_t *srv;
    conn_t *prev, *next;
    llhttp_t parser;
    char *in; /* received bytes not yet parsed: in[in_off..in_len) */
    size_t in_len, in_off, in_cap;
    lc_http_exchange_t *building; /* request being parsed */
    lc_http_exchange_t *active;   /* parsed and with the handler, unanswered */
    struct {                      /* per-request parse state, zeroed at message begin */
        lc_buf_t *hdr_target;        /* value buffer of the header being parsed */
        char hdr_name[HDR_NAME_MAX];
        size_t hdr_name_len, hdr_bytes, hdr_raw;
        unsigned nheaders;
        int in_headers, err_status, answered; /* answered: by the headers hook */
    } m;
    unsigned writes;
    struct {             /* an answer's body read from a file (respond_fd) */
        int fd;          /* -1: none */
        uint64_t off, left;
    } file;
    enum phase phase;
    int probe_slot; /* accepted beyond max_conns: for probe paths only */
    int counted;    /* in srv->nactive */
    int handles_open, reading, closing, close_after_write, lingering, peer_eof;
};

struct lc_http_server_s {
    uv_loop_t *loop;
    uv_tcp_t listener;
    llhttp_settings_t settings;
    lc_http_handler_cb handler;
    lc_http_headers_cb on_headers;
    void *arg;
    size_t max_body;
    lc_http_limits_t limits;
    struct {
        uint64_t count, logged_at; /* closes since the last line, and its time */
        int logged;
    } closed[WHY_COUNT];
    uint16_t port;
    int closing, listener_closed;
    conn_t *conns;
    unsigned nconns;  /* all, until their handles are closed */
    unsigned nactive; /* those the cap counts: neither closing nor lingering */
};

typedef struct write_req_s {
    uv_write_t req;
    conn_t *conn;
    char *data;                            /* freed once written */
    lc_http_part_t parts[LC_HTTP_PARTS_MAX]; /* sent after data, released once written */
    size_t nparts;
} write_req_t;

/* lc_http_server.c, for lc_http_parse.c: */
void process_input(conn_t *c);
void conn_close(conn_t *c);
void conn_deadline(conn_t *c, enum phase ph, uint64_t ms);
/* Queues bytes (taking ownership of data); writes complete in order. */
void conn_write(conn_t *c, char *data, size_t len);
/* Queues data (taken) then n parts (released once written, or at once when
 * the write cannot be queued). */
void conn_write_parts(conn_t *c, char *data, size_t len, const lc_http_part_t *parts, size_t n);
/* Releases n parts. */
void parts_release(const lc_http_part_t *parts, size_t n);
void conn_read_start(conn_t *c);
void conn_read_stop(conn_t *c);
void ex_free(lc_http_exchange_t *ex);

/* lc_http_parse.c, for lc_http_server.c: the llhttp callbacks. */
void lc_http_parse_settings(llhttp_settings_t *st);

static inline const char *buf_str(const lc_buf_t *b)
{
    return b->data ? b->data : "";
}

#endif
