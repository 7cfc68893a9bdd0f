/* trace.c — the dry run's trace lines. */
#include "trace.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#define VALUE_SHOW_MAX 120 /* bytes of a value shown; the rest is "…" */

void worker_trace_init(worker_trace_t *t, FILE *out)
{
    t->out = out;
    t->t0_ns = uv_hrtime();
    atomic_init(&t->done, false);
}

static double ms_since(const worker_trace_t *t)
{
    return (double)(uv_hrtime() - t->t0_ns) / 1e6;
}

/* Writes s[0..len) with control bytes shown as \xNN, so a trace line stays one line. */
static void put_clean(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

void worker_trace_request(worker_trace_t *t, const char *req, size_t len, unsigned hop)
{
    const char *eol = memchr(req, '\r', len);
    size_t line = eol ? (size_t)(eol - req) : len;
    fprintf(t->out, "%9.1f ms  %s", ms_since(t), hop > 0 ? "(redirect) " : "");
    put_clean(t->out, req, line > 400 ? 400 : line);
    fputc('\n', t->out);
    fflush(t->out);
}

void worker_trace_response(worker_trace_t *t, int status, uint64_t latency_us, uint64_t bytes,
                           const char *error)
{
    if (error != NULL && status > 0)
        fprintf(t->out, "             -> %d in %.2f ms, %llu bytes: error %s\n", status,
                (double)latency_us / 1000.0, (unsigned long long)bytes, error);
    else if (error != NULL)
        fprintf(t->out, "             -> error %s\n", error);
    else
        fprintf(t->out, "             -> %d in %.2f ms, %llu bytes\n", status,
                (double)latency_us / 1000.0, (unsigned long long)bytes);
    fflush(t->out);
}

bool worker_trace_redacts(const char *name)
{
    return strcasestr(name, "secret") != NULL || strcasestr(name, "password") != NULL ||
           strcasestr(name, "passwd") != NULL;
}

void worker_trace_value(worker_trace_t *t, const char *name, const lc_value_t *v, bool found)
{
    fprintf(t->out, "             %s = ", name);
    if (!found) {
        fputs("(not found)\n", t->out);
        return;
    }
    if (worker_trace_redacts(name)) {
        fputs("<redacted>\n", t->out);
        return;
    }
    fputc('"', t->out);
    put_clean(t->out, v->data, v->len > VALUE_SHOW_MAX ? VALUE_SHOW_MAX : v->len);
    fprintf(t->out, "\"%s (%zu bytes)\n", v->len > VALUE_SHOW_MAX ? "…" : "", v->len);
}

void worker_trace_note(worker_trace_t *t, const char *fmt, ...)
{
    va_list ap;
    fprintf(t->out, "%9.1f ms  ", ms_since(t));
    va_start(ap, fmt);
    vfprintf(t->out, fmt, ap);
    va_end(ap);
    fputc('\n', t->out);
    fflush(t->out);
}
