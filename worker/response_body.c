/* response_body.c — a response's body, decoded on first use and lent from the engine's pool. */
#include "response_body.h"

#include <assert.h>
#include <string.h>

#include "lc_err.h"

void worker_body_open(worker_body_t *b, const worker_conn_result_t *res, worker_bufpool_t *pool)
{
    assert(res != NULL);
    *b = (worker_body_t){.res = res, .pool = pool};
}

enum worker_coding worker_body_coding(const worker_conn_result_t *res)
{
    const char *name, *value;
    size_t len, pos = 0;
    while (worker_conn_header_next(res, &pos, &name, &value, &len))
        if (strcmp(name, "content-encoding") == 0)
            return worker_coding_of(value, len);
    return WORKER_CODING_IDENTITY;
}

static int decode(worker_body_t *b)
{
    const worker_conn_result_t *res = b->res;
    enum worker_coding coding = worker_body_coding(res);
    if (coding == WORKER_CODING_IDENTITY)
        return 0;
    if (coding == WORKER_CODING_UNKNOWN) {
        b->why = "the Content-Encoding is not one of gzip, deflate, br (nor a single one)";
        return LC_EPROTO;
    }
    /* http_conn keeps at most the cap of the body: one that filled it was cut. */
    if (res->body_len >= WORKER_BODY_CAPTURE_MAX) {
        b->why = "the encoded body is longer than the body cap";
        return LC_ETOOBIG;
    }
    if ((b->decoded = worker_bufpool_take(b->pool)) == NULL) {
        b->why = "out of memory while decoding";
        return LC_ENOMEM;
    }
    return worker_body_decode(coding, res->body, res->body_len, WORKER_BODY_CAPTURE_MAX,
                              b->decoded, &b->why);
}

int worker_body_decoded(worker_body_t *b, const char **data, size_t *len, const char **why)
{
    assert(b->res != NULL);
    if (!b->ready) {
        b->rv = decode(b);
        b->ready = true;
    }
    *why = b->why;
    if (b->rv != 0)
        return b->rv;
    if (b->decoded != NULL) {
        *data = b->decoded->data != NULL ? b->decoded->data : "";
        *len = b->decoded->len;
    } else {
        *data = b->res->body != NULL ? b->res->body : "";
        *len = b->res->body != NULL ? b->res->body_len : 0;
    }
    return 0;
}

void worker_body_close(worker_body_t *b)
{
    worker_bufpool_give(b->pool, b->decoded);
    b->decoded = NULL;
    b->res = NULL;
}
