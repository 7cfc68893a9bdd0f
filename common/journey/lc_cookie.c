/* lc_cookie.c — the cookie jar: Set-Cookie parsing, packed records, Cookie headers. */
#include "lc_cookie.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_err.h"

/* A record: a 16-byte head, then the name, value, domain and path bytes, unaligned. */
enum {
    REC_EXPIRY = 0,      /* uint64: ms since the epoch, NO_EXPIRY for a session cookie */
    REC_NAME_LEN = 8,    /* uint16 */
    REC_VALUE_LEN = 10,  /* uint16 */
    REC_PATH_LEN = 12,   /* uint16 */
    REC_DOMAIN_LEN = 14, /* uint8: lower case, no leading dot */
    REC_FLAGS = 15,      /* uint8: FLAG_* */
    REC_HEAD = 16,
};
#define NO_EXPIRY UINT64_MAX
#define DOMAIN_MAX 255
#define BLOCK_STEP 16u /* the block grows and shrinks in steps of this (malloc's own granularity) */
enum { FLAG_SECURE = 1, FLAG_HOST_ONLY = 2, FLAG_HTTP_ONLY = 4 };

_Static_assert(sizeof(lc_cookie_jar_t) <= 16, "an idle user's jar must stay tiny");
_Static_assert(LC_COOKIE_JAR_MAX_BYTES <= UINT16_MAX && LC_COOKIE_JAR_MAX_BYTES % BLOCK_STEP == 0,
               "used and cap are uint16_t");

/* One cookie, parsed from a header or read from a record; the bytes are not owned. */
typedef struct cookie_s {
    const char *name, *value, *domain, *path;
    size_t name_len, value_len, domain_len, path_len;
    uint64_t expiry;
    uint8_t flags;
} cookie_t;

/* A request the jar answers for. host_is_ip is worked out only when needed (-1 until then). */
typedef struct request_s {
    const char *host, *path;
    size_t host_len, path_len;
    bool https;
    int host_is_ip;
    uint64_t now_ms;
} request_t;

/* Records ---------------------------------------------------------------- */

static uint16_t get_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_u16(uint8_t *p, size_t v)
{
    assert(v <= UINT16_MAX);
    uint16_t u = (uint16_t)v;
    memcpy(p, &u, sizeof u);
}

static size_t record_size(const cookie_t *c)
{
    return REC_HEAD + c->name_len + c->value_len + c->domain_len + c->path_len;
}

/* Reads the record at rec into c (pointing into the block); returns its size. */
static size_t read_record(const uint8_t *rec, cookie_t *c)
{
    memcpy(&c->expiry, rec + REC_EXPIRY, sizeof c->expiry);
    c->name_len = get_u16(rec + REC_NAME_LEN);
    c->value_len = get_u16(rec + REC_VALUE_LEN);
    c->path_len = get_u16(rec + REC_PATH_LEN);
    c->domain_len = rec[REC_DOMAIN_LEN];
    c->flags = rec[REC_FLAGS];
    c->name = (const char *)rec + REC_HEAD;
    c->value = c->name + c->name_len;
    c->domain = c->value + c->value_len;
    c->path = c->domain + c->domain_len;
    return record_size(c);
}

static void write_record(uint8_t *rec, const cookie_t *c)
{
    assert(c->domain_len <= DOMAIN_MAX);
    memcpy(rec + REC_EXPIRY, &c->expiry, sizeof c->expiry);
    put_u16(rec + REC_NAME_LEN, c->name_len);
    put_u16(rec + REC_VALUE_LEN, c->value_len);
    put_u16(rec + REC_PATH_LEN, c->path_len);
    rec[REC_DOMAIN_LEN] = (uint8_t)c->domain_len;
    rec[REC_FLAGS] = c->flags;
    uint8_t *p = rec + REC_HEAD;
    memcpy(p, c->name, c->name_len);
    memcpy(p += c->name_len, c->value, c->value_len);
    memcpy(p += c->value_len, c->domain, c->domain_len);
    memcpy(p + c->domain_len, c->path, c->path_len);
}

static size_t round_up(size_t n) { return (n + BLOCK_STEP - 1) / BLOCK_STEP * BLOCK_STEP; }

/* Makes the block hold need bytes. Returns 0 or LC_ENOMEM (the jar unchanged). */
static int reserve_block(lc_cookie_jar_t *j, size_t need)
{
    assert(need <= LC_COOKIE_JAR_MAX_BYTES);
    if (need <= j->cap)
        return 0;
    size_t cap = round_up(need);
    uint8_t *block = realloc(j->block, cap);
    if (block == NULL)
        return LC_ENOMEM;
    j->block = block;
    j->cap = (uint16_t)cap;
    return 0;
}

/* Gives back what removals freed: all of an empty block, or the slack past a step. */
static void shrink_block(lc_cookie_jar_t *j)
{
    if (j->used == 0) {
        lc_cookie_jar_free(j);
        return;
    }
    size_t cap = round_up(j->used);
    if (cap + BLOCK_STEP > j->cap)
        return;
    uint8_t *block = realloc(j->block, cap);
    if (block != NULL) { /* else keep the larger block: nothing is lost */
        j->block = block;
        j->cap = (uint16_t)cap;
    }
}

/* Replaces the old_size bytes at off by the record of c (old_size 0: inserts it there).
 * The block must already hold the result. */
static void put_record(lc_cookie_jar_t *j, size_t off, size_t old_size, const cookie_t *c)
{
    size_t size = record_size(c);
    assert(off + old_size <= j->used && j->used - old_size + size <= j->cap);
    memmove(j->block + off + size, j->block + off + old_size, j->used - off - old_size);
    write_record(j->block + off, c);
    j->used = (uint16_t)(j->used - old_size + size);
}

static void remove_record(lc_cookie_jar_t *j, size_t off, size_t size)
{
    assert(off + size <= j->used && j->count > 0);
    memmove(j->block + off, j->block + off + size, j->used - off - size);
    j->used = (uint16_t)(j->used - size);
    j->count--;
}

static void purge_expired(lc_cookie_jar_t *j, uint64_t now_ms)
{
    size_t off = 0;
    while (off < j->used) {
        cookie_t c;
        size_t size = read_record(j->block + off, &c);
        if (c.expiry <= now_ms)
            remove_record(j, off, size);
        else
            off += size;
    }
}

/* The offset of the cookie with c's name, domain and path, or SIZE_MAX; OUT: *size. */
static size_t find_same(const lc_cookie_jar_t *j, const cookie_t *c, size_t *size)
{
    for (size_t off = 0; off < j->used; off += *size) {
        cookie_t r;
        *size = read_record(j->block + off, &r);
        if (r.name_len == c->name_len && r.domain_len == c->domain_len &&
            r.path_len == c->path_len && memcmp(r.name, c->name, c->name_len) == 0 &&
            memcmp(r.domain, c->domain, c->domain_len) == 0 &&
            memcmp(r.path, c->path, c->path_len) == 0)
            return off;
    }
    return SIZE_MAX;
}

void lc_cookie_jar_free(lc_cookie_jar_t *j)
{
    assert(j != NULL);
    free(j->block);
    memset(j, 0, sizeof *j);
}

void lc_cookie_jar_clear(lc_cookie_jar_t *j)
{
    assert(j != NULL);
    j->used = 0;
    j->count = 0;
}

size_t lc_cookie_jar_bytes(const lc_cookie_jar_t *j)
{
    assert(j != NULL);
    return j->cap;
}

/* Matching (RFC 6265 5.1.3, 5.1.4) ---------------------------------------- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

static bool equal_nocase(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

static bool host_is_ip(const char *host) { return host[0] == '[' || lc_addr_is_ip_literal(host); }

/* Whether host domain-matches domain (lower case): the same, or a name ending in "." domain. */
static bool domain_matches(request_t *rq, const char *domain, size_t len, bool host_only)
{
    if (rq->host_len == len)
        return equal_nocase(rq->host, domain, len);
    if (host_only || rq->host_len < len + 2 || rq->host[rq->host_len - len - 1] != '.' ||
        !equal_nocase(rq->host + rq->host_len - len, domain, len))
        return false;
    if (rq->host_is_ip < 0)
        rq->host_is_ip = host_is_ip(rq->host);
    return !rq->host_is_ip;
}

static bool path_matches(const request_t *rq, const char *path, size_t len)
{
    assert(len > 0 && path[0] == '/');
    if (len > rq->path_len || memcmp(rq->path, path, len) != 0)
        return false;
    return len == rq->path_len || path[len - 1] == '/' || rq->path[len] == '/';
}

/* Whether the request sends the cookie. */
static bool sends(request_t *rq, const cookie_t *c)
{
    return c->expiry > rq->now_ms && (rq->https || !(c->flags & FLAG_SECURE)) &&
           domain_matches(rq, c->domain, c->domain_len, c->flags & FLAG_HOST_ONLY) &&
           path_matches(rq, c->path, c->path_len);
}

/* The request's uri-path: up to '?' or '#', "/" when empty or not absolute. */
static void request_path(const char *path, const char **out, size_t *len)
{
    size_t n = strcspn(path, "?#");
    if (n == 0 || path[0] != '/') {
        *out = "/";
        *len = 1;
        return;
    }
    *out = path;
    *len = n;
}

static request_t make_request(const char *host, const char *path, bool https, uint64_t now_ms)
{
    assert(host != NULL && path != NULL);
    request_t rq = {.host = host, .host_len = strlen(host), .https = https, .host_is_ip = -1,
                    .now_ms = now_ms};
    request_path(path, &rq.path, &rq.path_len);
    return rq;
}

/* Parsing one Set-Cookie value (RFC 6265 5.2, 5.3) ------------------------- */

/* What a Set-Cookie's attributes say; the spans point into the header. */
typedef struct attrs_s {
    const char *domain, *path; /* NULL: none (a path that is not absolute counts as none) */
    size_t domain_len, path_len;
    bool has_max_age, has_expires;
    uint64_t max_age_expiry, expires_expiry;
    uint8_t flags; /* FLAG_SECURE, FLAG_HTTP_ONLY */
} attrs_t;

/* Control characters other than HTAB: none may reach a header we send. */
static bool has_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

/* RFC 7230's token: visible ASCII but the separators. */
static bool is_token(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || strchr("()<>@,;:\\\"/[]?={}", c) != NULL)
            return false;
    }
    return true;
}

/* Cuts spaces and tabs off both ends of s[0..*len). */
static const char *trim(const char *s, size_t *len)
{
    while (*len > 0 && (s[0] == ' ' || s[0] == '\t'))
        s++, (*len)--;
    while (*len > 0 && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
        (*len)--;
    return s;
}

static bool is_named(const char *name, size_t len, const char *what)
{
    return strlen(what) == len && equal_nocase(name, what, len);
}

/* Max-Age: an optional '-' then digits, else ignored; <= 0 means already expired. */
static bool parse_max_age(const char *v, size_t len, uint64_t now_ms, uint64_t *expiry)
{
    const uint64_t max_secs = 1000000000000ull; /* past any date that matters; no overflow */
    bool negative = len > 0 && v[0] == '-';
    size_t i = negative ? 1 : 0;
    if (i == len)
        return false;
    uint64_t secs = 0;
    for (; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        secs = secs * 10 + (uint64_t)(v[i] - '0');
        if (secs > max_secs)
            secs = max_secs;
    }
    if (negative || secs == 0)
        *expiry = 0;
    else
        *expiry = now_ms > NO_EXPIRY - 1 - secs * 1000 ? NO_EXPIRY - 1 : now_ms + secs * 1000;
    return true;
}

/* One cookie-av; an attribute it does not know or cannot read is ignored, as RFC 6265 says. */
static void parse_attribute(const char *name, size_t nlen, const char *v, size_t vlen,
                            uint64_t now_ms, attrs_t *a)
{
    if (is_named(name, nlen, "expires")) {
        if (lc_cookie_date_parse(v, vlen, &a->expires_expiry))
            a->has_expires = true;
    } else if (is_named(name, nlen, "max-age")) {
        if (parse_max_age(v, vlen, now_ms, &a->max_age_expiry))
            a->has_max_age = true;
    } else if (is_named(name, nlen, "domain")) {
        if (vlen > 0 && v[0] == '.')
            v++, vlen--;
        if (vlen > 0) {
            a->domain = v;
            a->domain_len = vlen;
        }
    } else if (is_named(name, nlen, "path")) {
        bool absolute = vlen > 0 && v[0] == '/';
        a->path = absolute ? v : NULL;
        a->path_len = absolute ? vlen : 0;
    } else if (is_named(name, nlen, "secure")) {
        a->flags |= FLAG_SECURE;
    } else if (is_named(name, nlen, "httponly")) {
        a->flags |= FLAG_HTTP_ONLY;
    }
}

/* The attributes after the name-value pair: s[0..len) is everything past its ';'. */
static void parse_attributes(const char *s, size_t len, uint64_t now_ms, attrs_t *a)
{
    while (len > 0) {
        const char *semi = memchr(s, ';', len);
        size_t av_len = semi != NULL ? (size_t)(semi - s) : len;
        const char *eq = memchr(s, '=', av_len);
        size_t nlen = eq != NULL ? (size_t)(eq - s) : av_len;
        size_t vlen = eq != NULL ? av_len - nlen - 1 : 0;
        const char *name = trim(s, &nlen);
        const char *value = trim(eq != NULL ? eq + 1 : s + av_len, &vlen);
        parse_attribute(name, nlen, value, vlen, now_ms, a);
        s += av_len;
        len -= av_len;
        if (len > 0)
            s++, len--; /* the ';' */
    }
}

/* The cookie's domain into buf (lower case) and whether it is host-only; LC_EINVAL when the
 * Domain names another site, a top-level domain, or anything but itself for an IP host. */
static int resolve_domain(const attrs_t *a, request_t *rq, char *buf, cookie_t *c)
{
    if (rq->host_len == 0 || rq->host_len > DOMAIN_MAX)
        return LC_EINVAL;
    const char *from = a->domain != NULL ? a->domain : rq->host;
    size_t len = a->domain != NULL ? a->domain_len : rq->host_len;
    if (len > DOMAIN_MAX)
        return LC_EINVAL;
    for (size_t i = 0; i < len; i++)
        buf[i] = lower(from[i]);
    c->domain = buf;
    c->domain_len = len;
    if (a->domain == NULL) {
        c->flags |= FLAG_HOST_ONLY;
        return 0;
    }
    if (len == rq->host_len && equal_nocase(rq->host, buf, len)) {
        if (host_is_ip(rq->host)) /* an address has no subdomains to share the cookie with */
            c->flags |= FLAG_HOST_ONLY;
        return 0;
    }
    if (memchr(buf, '.', len) == NULL) /* "com": every site under it would get the cookie */
        return LC_EINVAL;
    return domain_matches(rq, buf, len, false) ? 0 : LC_EINVAL;
}

/* RFC 6265 5.1.4's default-path: the request path up to its last '/', or "/". */
static void default_path(const request_t *rq, cookie_t *c)
{
    size_t last = rq->path_len;
    while (last > 0 && rq->path[last - 1] != '/')
        last--;
    c->path = last > 1 ? rq->path : "/";
    c->path_len = last > 1 ? last - 1 : 1;
}

static bool has_prefix(const cookie_t *c, const char *prefix)
{
    size_t n = strlen(prefix);
    return c->name_len >= n && equal_nocase(c->name, prefix, n);
}

/* The cookie prefixes of RFC 6265bis: what a __Secure- or __Host- name promises. */
static bool prefix_kept(const cookie_t *c, const attrs_t *a)
{
    if (has_prefix(c, "__Secure-"))
        return c->flags & FLAG_SECURE;
    if (has_prefix(c, "__Host-"))
        return (c->flags & FLAG_SECURE) && a->domain == NULL && a->path != NULL &&
               c->path_len == 1;
    return true;
}

/* Parses set_cookie[0..len) into c, whose domain goes into domain_buf (DOMAIN_MAX bytes). */
static int parse_cookie(const char *s, size_t len, request_t *rq, char *domain_buf, cookie_t *c)
{
    if (len > LC_COOKIE_MAX_HEADER)
        return LC_ETOOBIG;
    if (len == 0 || has_control(s, len))
        return LC_EINVAL;
    const char *semi = memchr(s, ';', len);
    size_t pair_len = semi != NULL ? (size_t)(semi - s) : len;
    const char *eq = memchr(s, '=', pair_len);
    if (eq == NULL)
        return LC_EINVAL;
    memset(c, 0, sizeof *c);
    c->name_len = (size_t)(eq - s);
    c->name = trim(s, &c->name_len);
    c->value_len = pair_len - (size_t)(eq + 1 - s);
    c->value = trim(eq + 1, &c->value_len);
    if (!is_token(c->name, c->name_len))
        return LC_EINVAL;
    attrs_t a = {0};
    if (semi != NULL)
        parse_attributes(semi + 1, len - pair_len - 1, rq->now_ms, &a);
    c->flags = a.flags;
    if ((c->flags & FLAG_SECURE) && !rq->https)
        return LC_EINVAL; /* RFC 6265bis: only a secure origin sets a Secure cookie */
    int rv = resolve_domain(&a, rq, domain_buf, c);
    if (rv != 0)
        return rv;
    if (a.path != NULL) {
        c->path = a.path;
        c->path_len = a.path_len;
    } else {
        default_path(rq, c);
    }
    if (c->path_len > LC_COOKIE_MAX_PATH)
        return LC_ETOOBIG;
    if (!prefix_kept(c, &a))
        return LC_EINVAL;
    c->expiry = a.has_max_age ? a.max_age_expiry : a.has_expires ? a.expires_expiry : NO_EXPIRY;
    return 0;
}

/* The jar's operations ------------------------------------------------------ */

/* Stores, replaces or deletes c in a jar already purged of expired cookies. */
static int put_cookie(lc_cookie_jar_t *j, const cookie_t *c, uint64_t now_ms)
{
    size_t old_size = 0;
    size_t off = find_same(j, c, &old_size);
    if (c->expiry <= now_ms) {
        if (off != SIZE_MAX)
            remove_record(j, off, old_size);
        return 0;
    }
    if (off == SIZE_MAX) {
        if (j->count >= LC_COOKIE_JAR_MAX_COUNT)
            return LC_ETOOBIG;
        off = j->used;
        old_size = 0;
    }
    size_t need = j->used - old_size + record_size(c);
    if (need > LC_COOKIE_JAR_MAX_BYTES)
        return LC_ETOOBIG;
    int rv = reserve_block(j, need);
    if (rv != 0)
        return rv;
    put_record(j, off, old_size, c);
    if (old_size == 0)
        j->count++;
    return 0;
}

int lc_cookie_jar_store(lc_cookie_jar_t *j, const char *set_cookie, size_t len, const char *host,
                        const char *path, bool https, uint64_t now_ms)
{
    assert(j != NULL && (set_cookie != NULL || len == 0));
    assert(j->used <= j->cap && (j->block != NULL || j->cap == 0));
    request_t rq = make_request(host, path, https, now_ms);
    char domain[DOMAIN_MAX];
    cookie_t c;
    int rv = parse_cookie(set_cookie, len, &rq, domain, &c);
    if (rv != 0)
        return rv;
    /* Expired cookies are invisible, so purging them leaves the jar unchanged to its users. */
    purge_expired(j, now_ms);
    rv = put_cookie(j, &c, now_ms);
    shrink_block(j);
    return rv;
}

/* The offsets of the cookies rq sends, longer paths first, then in creation order (stable).
 * Returns their count. */
static size_t select_cookies(const lc_cookie_jar_t *j, request_t *rq,
                             uint16_t order[LC_COOKIE_JAR_MAX_COUNT])
{
    size_t n = 0, size, path_len[LC_COOKIE_JAR_MAX_COUNT];
    for (size_t off = 0; off < j->used; off += size) {
        cookie_t c;
        size = read_record(j->block + off, &c);
        if (!sends(rq, &c))
            continue;
        assert(n < LC_COOKIE_JAR_MAX_COUNT);
        size_t at = n;
        for (; at > 0 && path_len[at - 1] < c.path_len; at--) {
            order[at] = order[at - 1];
            path_len[at] = path_len[at - 1];
        }
        order[at] = (uint16_t)off;
        path_len[at] = c.path_len;
        n++;
    }
    return n;
}

static void append_reserved(lc_buf_t *out, const char *s, size_t len)
{
    int rv = lc_buf_append(out, s, len);
    assert(rv == 0); /* the room was reserved */
    (void)rv;
}

int lc_cookie_jar_header(const lc_cookie_jar_t *j, const char *host, const char *path, bool https,
                         uint64_t now_ms, lc_buf_t *out, size_t *n)
{
    assert(j != NULL && out != NULL && n != NULL);
    *n = 0;
    request_t rq = make_request(host, path, https, now_ms);
    uint16_t order[LC_COOKIE_JAR_MAX_COUNT];
    size_t count = select_cookies(j, &rq, order);
    if (count == 0)
        return 0;
    cookie_t c;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        read_record(j->block + order[i], &c);
        total += (i > 0 ? 2 : 0) + c.name_len + 1 + c.value_len;
    }
    if (lc_buf_reserve(out, total) != 0)
        return LC_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        read_record(j->block + order[i], &c);
        if (i > 0)
            append_reserved(out, "; ", 2);
        append_reserved(out, c.name, c.name_len);
        append_reserved(out, "=", 1);
        append_reserved(out, c.value, c.value_len);
    }
    *n = count;
    return 0;
}

bool lc_cookie_jar_get(const lc_cookie_jar_t *j, const char *name, size_t name_len,
                       const char *host, const char *path, bool https, uint64_t now_ms,
                       lc_value_t *out)
{
    assert(j != NULL && (name != NULL || name_len == 0) && out != NULL);
    request_t rq = make_request(host, path, https, now_ms);
    uint16_t order[LC_COOKIE_JAR_MAX_COUNT];
    size_t count = select_cookies(j, &rq, order);
    for (size_t i = 0; i < count; i++) {
        cookie_t c;
        read_record(j->block + order[i], &c);
        if (c.name_len != name_len || memcmp(c.name, name, name_len) != 0)
            continue;
        size_t quoted = c.value_len >= 2 && c.value[0] == '"' && c.value[c.value_len - 1] == '"';
        out->data = c.value + quoted;
        out->len = c.value_len - 2 * quoted;
        out->type = LC_V_STRING;
        return true;
    }
    return false;
}
