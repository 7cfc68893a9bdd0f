/* conn_fixture.h — what test_http_conn and test_h2_session share: an owner of a worker_conn
 * that records what it hears (results, with copies of their headers and the body's start),
 * the header names a request wants, and the start and read of a fake transport. A harness
 * puts a conn_seen_t first, so a connection's data is one. */
#ifndef TESTS_UNIT_CONN_FIXTURE_H
#define TESTS_UNIT_CONN_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "http_conn.h"

typedef struct conn_seen_s {
    int done, closed;
    worker_conn_result_t result; /* the last; headers point at the copy below */
    char headers[1024];
    char body[64];
    size_t body_len;             /* captured (body holds its start) */
    bool destroyed;
} conn_seen_t;

static void seen_ready(worker_conn_t *c) { (void)c; }

static void seen_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    conn_seen_t *s = c->data;
    s->done++;
    s->result = *r;
    assert_true(r->headers_len <= sizeof s->headers);
    if (r->headers_len > 0)
        memcpy(s->headers, r->headers, r->headers_len);
    s->result.headers = s->headers;
    s->body_len = r->body_len;
    if (r->body != NULL)
        memcpy(s->body, r->body, r->body_len < sizeof s->body ? r->body_len : sizeof s->body);
    worker_conn_release(c);
}

static void seen_closed(worker_conn_t *c) { ((conn_seen_t *)c->data)->closed++; }
static void seen_destroyed(worker_conn_t *c) { ((conn_seen_t *)c->data)->destroyed = true; }

static const worker_conn_cbs_t seen_cbs = {
    .ready = seen_ready, .done = seen_done, .closed = seen_closed, .destroyed = seen_destroyed,
};

static const char *const want_names[] = {"set-cookie", "location"};
static const size_t want_lens[] = {10, 8};
static const worker_hdr_want_t want = {.names = want_names, .lens = want_lens, .n = 2};

static void fake_start(worker_conn_t *c) { worker_conn_ready(c); }
static void fake_read(worker_conn_t *c, const char *buf, size_t len) { worker_conn_feed(c, buf, len); }

#endif
