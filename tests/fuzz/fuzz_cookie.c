/* fuzz_cookie.c — Set-Cookie lines from hostile servers into one jar, then Cookie headers out;
 * properties: a header carries no control character but HTAB and is "name=value" pairs joined by
 * "; ", as many as it says; the limits hold; a refused store leaves the jar as it was; get()
 * finds the first cookie a header sends; a parsed cookie-date is in years 1601-9999.
 * Input: records of one control byte (host, path, https, clock step) then a varint-prefixed
 * Set-Cookie value (see fuzz_util.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_cookie.h"
#include "lc_err.h"

static const char *const hosts[] = {"www.example.com", "example.com", "a.b.example.com",
                                    "127.0.0.1",       "::1",         "localhost",
                                    "evil.com",        "h.0.0.1"};
static const char *const paths[] = {"/", "/foo", "/foo/bar", "/foobar", "", "/a/b/c?x=/y",
                                    "/foo/", "x"};

#define START_MS 1700000000000ull
#define LAST_DATE_MS 253402300799000ull /* 9999-12-31T23:59:59Z */

static void check_limits(const lc_cookie_jar_t *j)
{
    FUZZ_CHECK(j->count <= LC_COOKIE_JAR_MAX_COUNT, "%u cookies", j->count);
    FUZZ_CHECK(j->used <= j->cap && j->cap <= LC_COOKIE_JAR_MAX_BYTES, "used %u, cap %u", j->used,
               j->cap);
    FUZZ_CHECK(lc_cookie_jar_bytes(j) == j->cap, "bytes %zu, cap %u", lc_cookie_jar_bytes(j),
               j->cap);
    FUZZ_CHECK((j->block == NULL) == (j->cap == 0) && (j->count == 0) == (j->used == 0),
               "block %p, cap %u, count %u, used %u", (void *)j->block, j->cap, j->count, j->used);
}

/* The first pair's value in a header: after its '=', up to "; " or the end; OUT: *len. */
static const char *first_value(const lc_buf_t *b, size_t *len)
{
    const char *eq = memchr(b->data, '=', b->len), *semi = memchr(b->data, ';', b->len);
    *len = (size_t)((semi != NULL ? semi : b->data + b->len) - (eq + 1));
    return eq + 1;
}

/* The header for host and path, checked; OUT: *n. The caller frees b. */
static void checked_header(const lc_cookie_jar_t *j, const char *host, const char *path,
                           bool https, uint64_t now, lc_buf_t *b, size_t *n)
{
    lc_buf_init(b);
    int rv = lc_cookie_jar_header(j, host, path, https, now, b, n);
    FUZZ_CHECK(rv == 0, "header: %d", rv);
    FUZZ_CHECK((*n == 0) == (b->len == 0), "%zu cookies in %zu bytes", *n, b->len);
    FUZZ_CHECK(*n <= j->count && b->len <= j->used + 2 * *n, "%zu cookies, %zu bytes", *n,
               b->len);
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = (unsigned char)b->data[i];
        FUZZ_CHECK((c >= 0x20 || c == '\t') && c != 0x7f, "byte 0x%02x in a Cookie header", c);
    }
    size_t pairs = 0;
    for (size_t at = 0; at < b->len; pairs++) {
        const char *semi = memchr(b->data + at, ';', b->len - at);
        size_t end = semi != NULL ? (size_t)(semi - b->data) : b->len;
        const char *eq = memchr(b->data + at, '=', end - at);
        FUZZ_CHECK(eq != NULL && eq > b->data + at, "pair %zu of \"%s\" is no name=value",
                   pairs, b->data);
        FUZZ_CHECK(semi == NULL || (end + 2 < b->len && b->data[end + 1] == ' '),
                   "\"%s\": pairs are joined by \"; \"", b->data);
        at = semi != NULL ? end + 2 : end;
    }
    FUZZ_CHECK(pairs == *n, "%zu pairs, %zu said", pairs, *n);
}

/* get() finds the first cookie a header names, with its value, DQUOTEs off. */
static void check_get(const lc_cookie_jar_t *j, const char *host, const char *path, bool https,
                      uint64_t now, const lc_buf_t *b)
{
    const char *eq = memchr(b->data, '=', b->len);
    size_t name_len = (size_t)(eq - b->data), sent_len;
    const char *sent = first_value(b, &sent_len);
    lc_value_t v;
    bool found = lc_cookie_jar_get(j, b->data, name_len, host, path, https, now, &v);
    FUZZ_CHECK(found, "get() misses \"%.*s\"", (int)name_len, b->data);
    bool quoted = sent_len >= 2 && sent[0] == '"' && sent[sent_len - 1] == '"';
    FUZZ_CHECK(v.type == LC_V_STRING && v.len == sent_len - 2 * quoted &&
                   memcmp(v.data, sent + quoted, v.len) == 0,
               "get() \"%.*s\", the header \"%.*s\"", (int)v.len, v.data, (int)sent_len, sent);
}

/* A refused store: the bytes are as they were (LC_EINVAL), or at least what is sent is. */
static void check_store(lc_cookie_jar_t *j, const uint8_t *line, size_t len, const char *host,
                        const char *path, bool https, uint64_t now)
{
    lc_cookie_jar_t before = *j;
    uint8_t *copy = j->used ? malloc(j->used) : NULL;
    lc_buf_t sent;
    size_t n_sent, n_after;
    if (j->used && copy == NULL)
        abort();
    if (copy != NULL)
        memcpy(copy, j->block, j->used);
    checked_header(j, host, path, https, now, &sent, &n_sent);
    int rv = lc_cookie_jar_store(j, (const char *)line, len, host, path, https, now);
    FUZZ_CHECK(rv == 0 || rv == LC_EINVAL || rv == LC_ETOOBIG, "store: %d", rv);
    check_limits(j);
    if (rv == LC_EINVAL)
        FUZZ_CHECK(memcmp(&before, j, sizeof *j) == 0 &&
                       (copy == NULL || memcmp(copy, j->block, j->used) == 0),
                   "a malformed Set-Cookie changed the jar");
    if (rv != 0) {
        lc_buf_t after;
        checked_header(j, host, path, https, now, &after, &n_after);
        FUZZ_CHECK(n_after == n_sent && (n_sent == 0 || strcmp(sent.data, after.data) == 0),
                   "a refused Set-Cookie changed what is sent");
        lc_buf_free(&after);
    }
    lc_buf_free(&sent);
    free(copy);
}

static void check_date(const uint8_t *text, size_t len)
{
    uint64_t ms;
    if (lc_cookie_date_parse((const char *)text, len, &ms))
        FUZZ_CHECK(ms <= LAST_DATE_MS, "a date %llu ms after the epoch", (unsigned long long)ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    lc_cookie_jar_t jar = {0};
    uint64_t now = START_MS;
    const uint8_t *line;
    size_t len;
    for (;;) {
        uint8_t ctl = fuzz_u8(&in);
        if (!fuzz_record(&in, &line, &len))
            break;
        const char *host = hosts[ctl & 7], *path = paths[(ctl >> 3) & 7];
        bool https = ctl & 0x40;
        if (ctl & 0x80)
            now += 1000u * (uint64_t)(ctl & 0x3f); /* later; Max-Age cookies expire */
        check_store(&jar, line, len, host, path, https, now);
        check_date(line, len);
        for (size_t h = 0; h < sizeof hosts / sizeof hosts[0]; h++) {
            lc_buf_t b;
            size_t n;
            const char *p = paths[(h + ctl) & 7];
            checked_header(&jar, hosts[h], p, https, now, &b, &n);
            if (n > 0)
                check_get(&jar, hosts[h], p, https, now, &b);
            lc_buf_free(&b);
        }
        if ((ctl & 0xc0) == 0xc0 && (ctl & 0x3f) == 0x3f)
            lc_cookie_jar_clear(&jar);
    }
    lc_cookie_jar_free(&jar);
    return 0;
}
