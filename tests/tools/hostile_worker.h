/* hostile_worker.h — what lc_hostile_worker's parts share: its options (one global, set
 * in main and read by the attacks), the connection and handshake helpers (hostile_conn.c)
 * and the attacks (hostile_attacks.c), one per invocation. */
#ifndef LC_HOSTILE_WORKER_H
#define LC_HOSTILE_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"

typedef struct {
    const char *attack, *address, *secret_file, *proof, *id, *id2, *as, *endpoint, *kind;
    const char *reason, *reason_hex;
    uint64_t run, seq, requests, failures, gen, interval;
    uint32_t users, capacity, count, name_bytes;
    double hold;
    bool final, have_claim, have_gen;
    Lc__RunLoad claim;
    lc_join_secret_t secret;
} hw_opts_t;


/* Set by main from the command line; the attacks only read it, but for --claim. */
extern hw_opts_t hw;

/* ---- hostile_conn.c: time, output, connections, the handshake ------------- */

uint64_t hw_now_ms(void); /* monotonic */
/* "lc_hostile_worker ATTACK: " and the message, on stderr. */
void hw_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A text from the master, printable: bytes outside ASCII as \xNN. */
void hw_print_text(const char *s);

typedef struct frame_s {
    Lc__Envelope *env;
    struct frame_s *next;
} hw_frame_t;

typedef struct {
    int fd;
    lc_frame_reader_t reader;
    hw_frame_t *head, *tail;
    bool eof; /* closed by the master (or garbage from it) */
    uint8_t nonce[64];
    size_t nonce_len;
} hw_conn_t;

typedef enum { HW_GOT_FRAME, HW_GOT_TIMEOUT, HW_GOT_CLOSED } hw_got_t;

/* A blocking TCP connection to IP:PORT; the fd, or -1. */
int hw_dial(const char *address);
/* Dials --connect; false (and a diagnostic) when it cannot. c is to be closed either way. */
bool hw_conn_open(hw_conn_t *c);
void hw_conn_close(hw_conn_t *c);
/* Reads what is there within timeout_ms (one read). */
void hw_conn_pump(hw_conn_t *c, int timeout_ms);
/* The next envelope within timeout_ms (caller frees), or why there is none. */
hw_got_t hw_conn_next(hw_conn_t *c, int timeout_ms, Lc__Envelope **out);
/* Whether the master closed c within timeout_ms (frames meanwhile dropped). */
bool hw_conn_closed_within(hw_conn_t *c, int timeout_ms);
/* Sends env as one frame; false when it could not be encoded or sent whole. */
bool hw_conn_send(hw_conn_t *c, const Lc__Envelope *env);

typedef enum {
    HW_JOIN_WELCOMED, HW_JOIN_REFUSED, HW_JOIN_REDIRECTED, HW_JOIN_CLOSED, HW_JOIN_SILENT
} hw_join_t;

typedef struct {
    hw_join_t how;
    char reason[512];
} hw_join_result_t;

typedef struct {
    const char *id;       /* worker_id in the Hello */
    const char *proof_id; /* the id the proof is made for (normally id) */
    const char *name;     /* NULL: id */
    size_t name_len;      /* for a name with NUL-free arbitrary bytes */
    Lc__RunLoad **running;
    size_t n_running;
} hw_hello_t;

/* Waits for the master's Challenge and keeps its nonce. */
bool hw_wait_challenge(hw_conn_t *c);
/* A Hello as h says, with the join proof of --secret-file and --proof. */
bool hw_send_hello(hw_conn_t *c, const hw_hello_t *h);
/* What the master answers a Hello within timeout_ms. */
hw_join_result_t hw_await_join(hw_conn_t *c, int timeout_ms);
/* "welcomed", "refused: <reason>", "redirected: <leader>", "closed" or "open". */
void hw_print_join(const hw_join_result_t *r);
/* Dials, answers the challenge and says Hello; the master's answer in *r. */
bool hw_join(hw_conn_t *c, const hw_hello_t *h, hw_join_result_t *r);
/* Joins with the plain Hello of --id (and --claim); prints the answer and
 * returns false unless welcomed. */
bool hw_join_plain(hw_conn_t *c);
bool hw_send_heartbeat(hw_conn_t *c, double cpu, Lc__RunLoad **runs, size_t n_runs);

/* ---- hostile_attacks.c: each prints its line; the exit status ------------- */

int hw_attack_double_hello(void);
int hw_attack_stats(void);
int hw_attack_refuse(void);
int hw_attack_claim(void);
int hw_attack_heartbeat_nan(void);
int hw_attack_oversize(void);
int hw_attack_silent(void);
int hw_attack_takeover(void);
int hw_attack_proof_for_other_id(void);

#endif
