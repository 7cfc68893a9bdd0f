/* link_send.c — Hello, Heartbeat, AssignRefused and the StatsBatch envelope. */
#include "link_send.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_frame.h"
#include "lc_protocol.h"
#include "link.h"

/* Points ptrs at loads[0..n), as protobuf-c's repeated fields want. */
static size_t point_at(Lc__RunLoad **ptrs, const Lc__RunLoad *loads, size_t n)
{
    assert(n <= WORKER_LINK_MAX_LOADS);
    if (n > WORKER_LINK_MAX_LOADS)
        n = WORKER_LINK_MAX_LOADS;
    for (size_t i = 0; i < n; i++)
        ptrs[i] = (Lc__RunLoad *)&loads[i]; /* packing only reads them */
    return n;
}

/* Frames env, whose msg_case and message the caller set. */
static int encode(Lc__Envelope env, uint8_t **out, size_t *out_len)
{
    env.base = (ProtobufCMessage)PROTOBUF_C_MESSAGE_INIT(&lc__envelope__descriptor);
    return lc_frame_encode(&env, out, out_len);
}

int worker_link_encode_hello(const worker_hello_t *h, const uint8_t *nonce, size_t nonce_len,
                             uint8_t **out, size_t *out_len)
{
    assert(h != NULL && h->worker_id != NULL && h->name != NULL);
    Lc__RunLoad *ptrs[WORKER_LINK_MAX_LOADS];
    Lc__Hello hello = LC__HELLO__INIT;
    uint8_t proof[LC_JOIN_PROOF_LEN];
    if (h->secret != NULL && h->secret->len > 0 &&
        lc_join_proof_for(h->secret, nonce, nonce_len, h->worker_id, proof) == 0) {
        hello.join_proof.data = proof;
        hello.join_proof.len = sizeof proof;
    }
    hello.protocol_version = LC_PROTOCOL_VERSION;
    hello.worker_id = (char *)h->worker_id;
    hello.name = (char *)h->name;
    hello.threads = h->threads;
    hello.capacity = h->capacity;
    hello.n_running = point_at(ptrs, h->running, h->n_running);
    hello.running = ptrs;
    return encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_HELLO, .hello = &hello}, out,
                  out_len);
}

int worker_link_encode_heartbeat(const worker_heartbeat_t *hb, uint8_t **out, size_t *out_len)
{
    assert(hb != NULL);
    Lc__RunLoad *ptrs[WORKER_LINK_MAX_LOADS];
    Lc__Heartbeat msg = LC__HEARTBEAT__INIT;
    msg.time_ms = hb->time_ms;
    msg.cpu_percent = hb->cpu_percent;
    msg.rss_bytes = hb->rss_bytes;
    msg.n_runs = point_at(ptrs, hb->runs, hb->n_runs);
    msg.runs = ptrs;
    return encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_HEARTBEAT, .heartbeat = &msg},
                  out, out_len);
}

int worker_link_encode_refused(uint64_t run, uint64_t generation, const char *reason,
                               uint8_t **out, size_t *out_len)
{
    Lc__AssignRefused refused = LC__ASSIGN_REFUSED__INIT;
    refused.run = run;
    refused.generation = generation;
    refused.reason = (char *)reason;
    return encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED,
                                 .assign_refused = &refused},
                  out, out_len);
}

int worker_link_encode_stats(const Lc__StatsBatch *batch, uint8_t **out, size_t *out_len)
{
    assert(batch != NULL);
    /* Packing only reads the batch. */
    return encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_STATS,
                                 .stats = (Lc__StatsBatch *)batch},
                  out, out_len);
}

/* Sends a frame an encoder made (rv its result) and frees it. */
static int send_encoded(worker_link_t *l, int rv, uint8_t *frame, size_t len)
{
    if (rv != 0)
        return rv;
    rv = worker_link_send_frame(l, frame, len);
    free(frame);
    return rv;
}

int worker_link_send_hello(worker_link_t *l, const worker_hello_t *h, const uint8_t *nonce,
                           size_t nonce_len)
{
    uint8_t *frame = NULL;
    size_t len = 0;
    int rv = worker_link_encode_hello(h, nonce, nonce_len, &frame, &len);
    return send_encoded(l, rv, frame, len);
}

int worker_link_send_heartbeat(worker_link_t *l, const worker_heartbeat_t *hb)
{
    uint8_t *frame = NULL;
    size_t len = 0;
    int rv = worker_link_encode_heartbeat(hb, &frame, &len);
    return send_encoded(l, rv, frame, len);
}

int worker_link_send_run_done(worker_link_t *l, uint64_t run, const char *reason)
{
    Lc__RunDone done = LC__RUN_DONE__INIT;
    done.run = run;
    done.reason = (char *)reason;
    uint8_t *frame = NULL;
    size_t len = 0;
    int rv = encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_RUN_DONE, .run_done = &done},
                    &frame, &len);
    return send_encoded(l, rv, frame, len);
}

int worker_link_send_feed_request(worker_link_t *l, uint64_t run, uint32_t feeder, uint64_t seq,
                                  uint32_t count)
{
    Lc__FeedRequest req = LC__FEED_REQUEST__INIT;
    req.run = run;
    req.feeder = feeder;
    req.seq = seq;
    req.count = count;
    uint8_t *frame = NULL;
    size_t len = 0;
    int rv = encode((Lc__Envelope){.msg_case = LC__ENVELOPE__MSG_FEED_REQUEST,
                                   .feed_request = &req},
                    &frame, &len);
    return send_encoded(l, rv, frame, len);
}

int worker_link_send_refused(worker_link_t *l, uint64_t run, uint64_t generation,
                             const char *reason)
{
    uint8_t *frame = NULL;
    size_t len = 0;
    int rv = worker_link_encode_refused(run, generation, reason, &frame, &len);
    return send_encoded(l, rv, frame, len);
}
