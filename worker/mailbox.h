/* mailbox.h — any thread: the messages between the control thread and the engines,
 * and a mutex-guarded FIFO of them that wakes the receiving loop through uv_async. */
#ifndef WORKER_MAILBOX_H
#define WORKER_MAILBOX_H

#include <stdint.h>
#include <uv.h>

#include "plan.h"
#include "stats.h"

enum worker_msg_type {
    /* control → engine */
    WORKER_MSG_RUN_START, /* run, plan, users, spawn_rate, rate, lua (a script's sandbox) */
    WORKER_MSG_RUN_SCALE, /* run, users, spawn_rate, rate */
    WORKER_MSG_RUN_STOP,  /* run, deadline_ms */
    WORKER_MSG_COLLECT,   /* round */
    WORKER_MSG_QUIT,
    /* engine → control */
    WORKER_MSG_RUN_STATS, /* engine, run, stats, users, connections (one per run per round) */
    WORKER_MSG_ROUND_END, /* engine, round: every RUN_STATS of that round came before */
    WORKER_MSG_RUN_DONE,  /* engine, run, stats: the engine's last block of that run */
    WORKER_MSG_RUN_EXHAUSTED, /* engine, run, feeder: a stop_run feeder ran out of rows */
};

typedef struct worker_msg_s {
    struct worker_msg_s *next;
    enum worker_msg_type type;
    unsigned engine;
    uint64_t run;
    const worker_plan_t *plan;
    uint32_t users;
    uint64_t user_base;        /* the share's first ${user_id} - 1 (RUN_START, RUN_SCALE) */
    double spawn_rate;         /* closed model: this engine's users started per second */
    double rate;               /* open model: this engine's requests per second */
    uint32_t deadline_ms;
    uint64_t round;
    worker_stats_t *stats;     /* ownership travels with the message */
    uint32_t connections;
    uint32_t feeder;           /* RUN_EXHAUSTED: the program's feeder index */
    /* RUN_START of a run with a script: the engine's sandbox, loaded off its loop
     * (journey_lua.h); ownership travels with the message. NULL: the engine loads it. */
    struct worker_lua_run_s *lua;
} worker_msg_t;

/* A zeroed message of that type, or NULL when out of memory. */
worker_msg_t *worker_msg_new(enum worker_msg_type type);
void worker_msg_free(worker_msg_t *m);

typedef struct worker_mailbox_s {
    uv_mutex_t mu;
    worker_msg_t *head, *tail;
    uv_async_t async;    /* on the receiver's loop */
    int closed;          /* receiver gone: posts are dropped */
} worker_mailbox_t;

/* Initializes the mailbox with its async handle on the receiver's loop. */
int worker_mailbox_init(worker_mailbox_t *mb, uv_loop_t *loop, uv_async_cb cb);
/* Appends m and wakes the receiver (any thread). */
void worker_mailbox_post(worker_mailbox_t *mb, worker_msg_t *m);
/* Takes every queued message, oldest first (receiver's thread). */
worker_msg_t *worker_mailbox_take(worker_mailbox_t *mb);
/* Closes the async handle (receiver's thread) and frees queued messages;
 * close_cb runs when the handle is closed. */
void worker_mailbox_close(worker_mailbox_t *mb, uv_close_cb close_cb);
/* Destroys the mutex; call after close_cb ran. */
void worker_mailbox_destroy(worker_mailbox_t *mb);

#endif
