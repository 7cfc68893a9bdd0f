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

static int hex_digit(char c)
{
    int lower = c | 0x20;
    if (c >= '0' && c <= '9')
        return c - '0';
    return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}

/* Whether s[0..n) starts with %XX spelling byte c. */
static bool percent_of(const char *s, size_t n, unsigned char c)
{
    return n >= 3 && s[0] == '%' && hex_digit(s[1]) >= 0 && hex_digit(s[2]) >= 0 &&
           hex_digit(s[1]) * 16 + hex_digit(s[2]) == c;
}

/* Bytes of s[0..n) that spell v: each of v's bytes as itself or %XX (either case), a space
 * also as '+', so the url filter's and a form's encodings match as the raw value does; 0 when
 * s does not start with v. */
static size_t spelled_at(const lc_value_t *v, const char *s, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i < v->len; i++) {
        unsigned char c = (unsigned char)v->data[i];
        if (at < n && ((unsigned char)s[at] == c || (c == ' ' && s[at] == '+')))
            at++;
        else if (percent_of(s + at, n - at, c))
            at += 3;
        else
            return 0;
    }
    return at;
}

/* The longest secret spelled at s[0..n), in bytes; 0 for none. */
static size_t secret_at(const worker_trace_secrets_t *sec, const char *s, size_t n)
{
    size_t best = 0;
    for (size_t i = 0; sec != NULL && i < sec->n; i++) {
        size_t m = sec->v[i].len > 0 ? spelled_at(&sec->v[i], s, n) : 0;
        best = m > best ? m : best;
    }
    return best;
}

/* Writes s[0..len) as put_clean does, but at most show bytes of it, each secret in it as
 * "***" (a secret that starts before show is masked whole). */
static void put_masked(FILE *out, const char *s, size_t len, size_t show,
                       const worker_trace_secrets_t *sec)
{
    size_t i = 0, from = 0;
    if (sec != NULL && sec->overflow) {
        fputs("*** (more secret feeder columns than a trace masks one by one)", out);
        return;
    }
    while (i < len && i < show) {
        size_t m = secret_at(sec, s + i, len - i);
        if (m == 0) {
            i++;
            continue;
        }
        put_clean(out, s + from, i - from);
        fputs("***", out);
        i += m;
        from = i;
    }
    size_t end = i < show ? i : show;
    if (end > from)
        put_clean(out, s + from, end - from);
}

void worker_trace_request(worker_trace_t *t, const char *req, size_t len, unsigned hop,
                          const worker_trace_secrets_t *secrets)
{
    const char *eol = memchr(req, '\r', len);
    size_t line = eol ? (size_t)(eol - req) : len;
    fprintf(t->out, "%9.1f ms  %s", ms_since(t), hop > 0 ? "(redirect) " : "");
    put_masked(t->out, req, line, 400, secrets);
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

void worker_trace_value(worker_trace_t *t, const char *name, const lc_value_t *v, bool found,
                        const worker_trace_secrets_t *secrets)
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
    put_masked(t->out, v->data, v->len, VALUE_SHOW_MAX, secrets);
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
