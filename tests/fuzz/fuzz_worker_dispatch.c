/* fuzz_worker_dispatch.c — what the worker does with the master's frames,
 * without the socket worker/link.c reads them from (its dispatch is static
 * and bound to a uv stream): the input is the byte stream from a master, cut
 * into frames by lc_frame's reader and decoded as link.c does, then each
 * message handled as its callback would: an Assign's scenario through
 * lc_scenario_parse and worker_plan_build (with a rendering of each task), a
 * StatsAck through the outbox (filled with batches beforehand), a Redirect's
 * and a Welcome's addresses through lc_hostport_parse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_addr.h"
#include "lc_buf.h"
#include "lc_frame.h"
#include "lc_scenario.h"
#include "outbox.h"
#include "plan.h"

#define STOP_FEED 100

typedef struct link_sim_s {
    worker_outbox_t outbox;
    uint64_t conn;      /* connection the outbox's frames were written on */
    size_t lost;        /* batches the outbox reported lost */
    size_t frames;
} link_sim_t;

static void on_lost(void *arg, const worker_outbox_batch_t *b)
{
    link_sim_t *l = arg;
    l->lost++;
}

static void assign(const Lc__Assign *a)
{
    lc_scenario_t sc;
    char err[512];
    const char *json = a->scenario_json ? a->scenario_json : "";
    if (lc_scenario_parse(json, strlen(json), &sc, err, sizeof err) != 0)
        return;
    free(sc.tls.ca_file); /* a path the fuzzer chose: not opened here */
    sc.tls.ca_file = NULL;
    worker_plan_t *p;
    if (worker_plan_build(&p, &sc, err, sizeof err) != 0) {
        lc_scenario_free(&sc);
        return;
    }
    uint64_t rng = a->generation | 1;
    worker_tpl_vars_t vars = {.user_id = a->users, .iteration = a->run, .rng = &rng};
    lc_buf_t scratch = {0}, out = {0};
    for (size_t i = 0; i < p->n_tasks; i++) {
        const char *req;
        size_t len;
        worker_plan_render(p, i, &vars, &scratch, &out, &req, &len);
    }
    lc_buf_free(&scratch);
    lc_buf_free(&out);
    worker_plan_free(p);
}

/* link.c's dispatch, message by message; non-zero: the link closes. */
static int dispatch(link_sim_t *l, const Lc__Envelope *env)
{
    lc_hostport_t hp;
    char err[200];
    switch (env->msg_case) {
    case LC__ENVELOPE__MSG_CHALLENGE:
        return 0;
    case LC__ENVELOPE__MSG_JOIN_REFUSED:
        return 1;
    case LC__ENVELOPE__MSG_WELCOME:
        for (size_t i = 0; i < env->welcome->n_masters; i++)
            lc_hostport_parse(env->welcome->masters[i], 0, &hp, err, sizeof err);
        l->conn++;
        return 0;
    case LC__ENVELOPE__MSG_REDIRECT:
        if (env->redirect->leader != NULL)
            lc_hostport_parse(env->redirect->leader, 0, &hp, err, sizeof err);
        return 1;
    case LC__ENVELOPE__MSG_ASSIGN:
        assign(env->assign);
        return 0;
    case LC__ENVELOPE__MSG_STOP:
        return 0;
    case LC__ENVELOPE__MSG_STATS_ACK:
        worker_outbox_ack(&l->outbox, env->stats_ack->run, env->stats_ack->seq);
        return 0;
    default:
        return 1;
    }
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    link_sim_t *l = arg;
    Lc__Envelope *env;
    char why[200];
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0)
        return STOP_FEED;
    int rv = dispatch(l, env);
    lc__envelope__free_unpacked(env, NULL);
    /* A master that sends without end is cut off like one that sends junk. */
    return rv != 0 || ++l->frames >= 256 ? STOP_FEED : 0;
}

/* Batches (run 1..3, seq 1..4) as the control thread queues them, small
 * enough that the bound drops some. */
static void fill_outbox(link_sim_t *l)
{
    for (uint64_t run = 1; run <= 3; run++)
        for (uint64_t seq = 1; seq <= 4; seq++) {
            worker_batch_meta_t meta = {.run = run, .worker_id = "w1", .seq = seq,
                                        .requests = run * 10 + seq, .final = seq == 4};
            uint8_t *frame = malloc(64);
            if (frame == NULL)
                abort();
            memset(frame, (int)seq, 64);
            worker_outbox_push(&l->outbox, &meta, frame, 64, seq % 2 ? l->conn : 0);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_log();
    link_sim_t l = {.conn = 1};
    worker_outbox_init(&l.outbox, 512, on_lost, &l);
    fill_outbox(&l);
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX /* as link.c */);
    lc_frame_reader_feed(&r, data, size, on_frame, &l);
    lc_frame_reader_close(&r);
    worker_outbox_conn_lost(&l.outbox, l.conn);
    worker_outbox_clear(&l.outbox);
    return 0;
}
