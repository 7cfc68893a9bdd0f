/* api_read.c — answering an API read that a pool thread rendered: the
 * answer a job fills, and the hand-over between the loop and read_pool. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "lc_err.h"

void api_read_body(api_read_t *r, int status, const char *content_type, char *body, size_t len)
{
    free(r->body);
    if (r->body_fd >= 0)
        close(r->body_fd);
    r->body_fd = -1;
    r->status = status;
    r->content_type = content_type;
    r->body = body;
    r->len = len;
}

void api_read_file(api_read_t *r, int status, const char *content_type, int fd, size_t len)
{
    api_read_body(r, status, content_type, NULL, len);
    r->body_fd = fd;
}

void api_read_json(api_read_t *r, int status, json_t *doc)
{
    char *text = doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL) {
        api_read_body(r, 500, "application/json", strdup("{\"error\":\"out of memory\"}"), 0);
        r->len = r->body != NULL ? strlen(r->body) : 0;
        return;
    }
    api_read_body(r, status, "application/json", text, strlen(text));
}

void api_read_error(api_read_t *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *body = api_error_vjson(fmt, ap);
    va_end(ap);
    api_read_json(r, status, body);
}

static void read_done(read_job_t *job)
{
    api_read_t *r = (api_read_t *)job;
    if (r->release != NULL)
        r->release(r);
    if (job->cancelled)
        api_read_error(r, 503, "the master is shutting down");
    else if (r->body == NULL && r->body_fd < 0 && r->nparts == 0)
        api_read_error(r, 500, "the read gave no answer");
    const char *headers = r->headers[0] != '\0' ? r->headers : NULL;
    if (r->nparts > 0) {
        free(r->body);
        lc_http_exchange_respond_parts(r->ex, r->status, r->content_type, r->parts, r->nparts,
                                       headers);
    } else if (r->body_fd >= 0) {
        lc_http_exchange_respond_fd(r->ex, r->status, r->content_type, r->body_fd, r->len,
                                    headers);
    } else {
        /* The body is handed over, not copied: a large answer costs the loop no copy. */
        lc_http_part_t body = {.data = r->body, .len = r->len, .release = free, .arg = r->body};
        lc_http_exchange_respond_parts(r->ex, r->status, r->content_type, &body, 1, headers);
    }
    free(r); /* the container: r is its first member */
}

void api_read_submit(master_t *m, lc_http_exchange_t *ex, api_read_t *r)
{
    r->ex = ex;
    r->body_fd = -1;
    r->job.done = read_done;
    if (read_pool_submit(m->reads, &r->job) == 0)
        return;
    api_respond_error(ex, 503, "busy: %d reads are waiting; try again", READ_POOL_MAX_QUEUED);
    r->job.cancelled = true;
    if (r->release != NULL)
        r->release(r);
    api_read_body(r, 0, NULL, NULL, 0); /* frees the answer */
    free(r);
}
