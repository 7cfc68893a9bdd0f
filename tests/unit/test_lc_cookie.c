/* test_lc_cookie.c — the cookie jar as a hostile server would try it: every attribute, matching
 * edge cases, foreign domains, IP hosts, expiry in every form, limits, injected control bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lc_cookie.h"
#include "lc_err.h"

#define NOW 1700000000000ull /* 2023-11-14T22:13:20Z */
#define HOST "www.example.com"

/* Stores a Set-Cookie value received from HOST (or host) at NOW. */
static int store_from(lc_cookie_jar_t *j, const char *set_cookie, const char *host,
                      const char *path, bool https)
{
    return lc_cookie_jar_store(j, set_cookie, strlen(set_cookie), host, path, https, NOW);
}

static int store(lc_cookie_jar_t *j, const char *set_cookie)
{
    return store_from(j, set_cookie, HOST, "/", true);
}

/* The Cookie header the jar makes at now ("" when it sends none); checks *n and that no
 * control character got in. The text stays until the next call. */
static const char *header_at(const lc_cookie_jar_t *j, const char *host, const char *path,
                             bool https, uint64_t now)
{
    static char text[LC_COOKIE_JAR_MAX_BYTES + 2 * LC_COOKIE_JAR_MAX_COUNT + 1];
    lc_buf_t b = {0};
    size_t n = 12345;
    assert_int_equal(lc_cookie_jar_header(j, host, path, https, now, &b, &n), 0);
    if (n == 0) {
        assert_null(b.data);
        return "";
    }
    assert_non_null(b.data);
    assert_true(b.len < sizeof text);
    size_t pairs = 1;
    for (size_t i = 0; i < b.len; i++) {
        unsigned char c = (unsigned char)b.data[i];
        assert_false((c < 0x20 && c != '\t') || c == 0x7f);
        pairs += c == ';';
    }
    assert_int_equal(pairs, n);
    memcpy(text, b.data, b.len + 1);
    lc_buf_free(&b);
    return text;
}

static const char *header(const lc_cookie_jar_t *j, const char *host, const char *path)
{
    return header_at(j, host, path, true, NOW);
}

/* The value get() finds for name at host/path over https, or "(none)". */
static const char *value_of(const lc_cookie_jar_t *j, const char *name, const char *host,
                            const char *path, bool https)
{
    static char text[LC_COOKIE_MAX_HEADER + 1];
    lc_value_t v = {0};
    if (!lc_cookie_jar_get(j, name, strlen(name), host, path, https, NOW, &v))
        return "(none)";
    assert_int_equal(v.type, LC_V_STRING);
    assert_true(v.len < sizeof text);
    memcpy(text, v.data, v.len);
    text[v.len] = '\0';
    return text;
}

/* A store that must fail with code and leave what the jar sends and holds as it was. */
static void assert_refused(lc_cookie_jar_t *j, const char *set_cookie, size_t len,
                           const char *host, bool https, int code)
{
    static char before[LC_COOKIE_JAR_MAX_BYTES + 2 * LC_COOKIE_JAR_MAX_COUNT + 1];
    snprintf(before, sizeof before, "%s", header(j, host, "/a/b"));
    size_t bytes = lc_cookie_jar_bytes(j), count = j->count;
    assert_int_equal(lc_cookie_jar_store(j, set_cookie, len, host, "/a/b", https, NOW), code);
    assert_string_equal(header(j, host, "/a/b"), before);
    assert_int_equal(lc_cookie_jar_bytes(j), bytes);
    assert_int_equal(j->count, count);
}

static void refused(lc_cookie_jar_t *j, const char *set_cookie, int code)
{
    assert_refused(j, set_cookie, strlen(set_cookie), HOST, true, code);
}

static void refused_from(lc_cookie_jar_t *j, const char *set_cookie, const char *host, int code)
{
    assert_refused(j, set_cookie, strlen(set_cookie), host, false, code);
}

/* The jar itself ------------------------------------------------------------ */

static void test_empty_jar_is_tiny(void **state)
{
    assert_true(sizeof(lc_cookie_jar_t) <= 16);
    lc_cookie_jar_t j = {0}, zero = {0};
    assert_int_equal(lc_cookie_jar_bytes(&j), 0);
    assert_string_equal(header(&j, HOST, "/"), "");
    assert_string_equal(value_of(&j, "a", HOST, "/", true), "(none)");
    /* A refused store allocates nothing. */
    assert_int_equal(store(&j, "no equals sign"), LC_EINVAL);
    assert_int_equal(store_from(&j, "a=1; Domain=evil.com", HOST, "/", true), LC_EINVAL);
    assert_int_equal(store(&j, "a=1; Max-Age=0"), 0); /* deletes nothing */
    assert_null(j.block);
    assert_memory_equal(&j, &zero, sizeof j);
    lc_cookie_jar_clear(&j);
    lc_cookie_jar_free(&j);
    assert_memory_equal(&j, &zero, sizeof j);
}

static void test_store_send_free(void **state)
{
    lc_cookie_jar_t j = {0}, zero = {0};
    assert_int_equal(store(&j, "a=1"), 0);
    assert_int_equal(store(&j, "b=2"), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1; b=2");
    assert_true(lc_cookie_jar_bytes(&j) > 0);
    /* Deleting every cookie gives the block back. */
    assert_int_equal(store(&j, "a=; Max-Age=0"), 0);
    assert_int_equal(store(&j, "b=; Max-Age=0"), 0);
    assert_int_equal(lc_cookie_jar_bytes(&j), 0);
    assert_memory_equal(&j, &zero, sizeof j);
    assert_int_equal(store(&j, "c=3"), 0);
    lc_cookie_jar_free(&j);
    assert_memory_equal(&j, &zero, sizeof j);
    assert_string_equal(header(&j, HOST, "/"), "");
}

/* Two cookies of 40 bytes of name and value on example.com, path "/": 2 * (16 + 40 + 11 + 1). */
static void test_bytes_of_two_cookies(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store_from(&j, "session=0123456789abcdef0123456789abcdef0", "example.com",
                                "/", false), 0);
    assert_int_equal(store_from(&j, "csrftok=0123456789abcdef0123456789abcdef0", "example.com",
                                "/login", false), 0);
    assert_int_equal(j.used, 2 * (16 + 40 + 11 + 1));
    assert_int_equal(lc_cookie_jar_bytes(&j), 144);
    printf("two 40-byte cookies: sizeof(lc_cookie_jar_t) = %zu, heap %zu bytes\n",
           sizeof(lc_cookie_jar_t), lc_cookie_jar_bytes(&j));
    lc_cookie_jar_free(&j);
}

static void test_clear_keeps_block(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1"), 0);
    size_t bytes = lc_cookie_jar_bytes(&j);
    lc_cookie_jar_clear(&j);
    assert_string_equal(header(&j, HOST, "/"), "");
    assert_string_equal(value_of(&j, "a", HOST, "/", true), "(none)");
    assert_int_equal(lc_cookie_jar_bytes(&j), bytes);
    assert_int_equal(store(&j, "b=2"), 0);
    assert_string_equal(header(&j, HOST, "/"), "b=2");
    lc_cookie_jar_free(&j);
}

static void test_header_appends(void **state)
{
    lc_cookie_jar_t j = {0};
    lc_buf_t b = {0};
    size_t n;
    assert_int_equal(lc_buf_append(&b, "x", 1), 0);
    assert_int_equal(lc_cookie_jar_header(&j, HOST, "/", true, NOW, &b, &n), 0);
    assert_int_equal(n, 0);
    assert_string_equal(b.data, "x");
    assert_int_equal(store(&j, "a=1"), 0);
    assert_int_equal(lc_cookie_jar_header(&j, HOST, "/", true, NOW, &b, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(b.data, "xa=1");
    lc_buf_free(&b);
    lc_cookie_jar_free(&j);
}

/* Parsing -------------------------------------------------------------------- */

static void test_name_value_forms(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "  a  =  1  "), 0);
    assert_int_equal(store(&j, "q=\"x y\""), 0);
    assert_int_equal(store(&j, "e="), 0);
    assert_int_equal(store(&j, "eq=b=c"), 0);
    assert_int_equal(store(&j, "t=x\ty"), 0);
    assert_int_equal(store(&j, "u=caf\xc3\xa9, ok"), 0);
    assert_int_equal(store(&j, "one=\""), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1; q=\"x y\"; e=; eq=b=c; t=x\ty; "
                                                "u=caf\xc3\xa9, ok; one=\"");
    assert_string_equal(value_of(&j, "q", HOST, "/", true), "x y"); /* quotes removed */
    assert_string_equal(value_of(&j, "one", HOST, "/", true), "\"");
    assert_string_equal(value_of(&j, "e", HOST, "/", true), "");
    assert_string_equal(value_of(&j, "eq", HOST, "/", true), "b=c");
    lc_cookie_jar_free(&j);
}

static void test_malformed_refused(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "keep=1"), 0);
    refused(&j, "", LC_EINVAL);
    refused(&j, "noequals", LC_EINVAL);
    refused(&j, "noequals; a=1", LC_EINVAL);
    refused(&j, ";a=1", LC_EINVAL);
    refused(&j, "=1", LC_EINVAL);
    refused(&j, "  =1", LC_EINVAL);
    refused(&j, "a b=1", LC_EINVAL);
    static const char *const bad_names[] = {"a(b=1", "a)=1", "<a=1", "a>=1", "@=1", ",=1",
                                            "a:b=1", "a\\=1", "\"a\"=1", "a/=1", "[a]=1",
                                            "a?=1", "{a}=1", "caf\xc3\xa9=1"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
        refused(&j, bad_names[i], LC_EINVAL);
    /* Control characters anywhere: they would end our request's header early. */
    refused(&j, "a=1\r\nX-Injected: 1", LC_EINVAL);
    refused(&j, "a=1\n", LC_EINVAL);
    refused(&j, "a=1\r", LC_EINVAL);
    refused(&j, "a=\x7f", LC_EINVAL);
    refused(&j, "a=\x01", LC_EINVAL);
    refused(&j, "a=1; Path=/\r\n", LC_EINVAL);
    refused(&j, "a=1; Foo=\n", LC_EINVAL);
    assert_refused(&j, "a=1\0b", 5, HOST, true, LC_EINVAL);
    assert_refused(&j, "a\0=1", 4, HOST, true, LC_EINVAL);
    assert_refused(&j, "a=1; Path=/\0", 12, HOST, true, LC_EINVAL);
    assert_string_equal(header(&j, HOST, "/"), "keep=1");
    lc_cookie_jar_free(&j);
}

static void test_attribute_names_any_case(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1; pAtH=/x; DOMAIN=Example.COM; SeCuRe; HTTPONLY; "
                               "max-AGE=10; samesite=Strict; Partitioned; Priority=High; ; ;"),
                     0);
    assert_string_equal(header(&j, "sub.example.com", "/x/y"), "a=1");
    assert_string_equal(header(&j, "sub.example.com", "/"), "");
    assert_string_equal(header_at(&j, "sub.example.com", "/x", false, NOW), ""); /* Secure */
    assert_string_equal(header_at(&j, "sub.example.com", "/x", true, NOW + 10000), "");
    assert_int_equal(store(&j, "b=2;EXPIRES=Sun, 06 Nov 1994 08:49:37 GMT"), 0);
    assert_string_equal(header(&j, HOST, "/"), ""); /* expired on arrival: never stored */
    lc_cookie_jar_free(&j);
}

/* The last Domain and Path win (RFC 6265 5.3); an empty Domain is no Domain. */
static void test_repeated_attributes(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1; Domain=evil.com; Domain=example.com"), 0);
    refused(&j, "b=1; Domain=example.com; Domain=evil.com", LC_EINVAL);
    assert_int_equal(store(&j, "c=1; Path=/x; Path=/y"), 0);
    assert_int_equal(store(&j, "d=1; Domain=example.com; Domain="), 0);
    assert_string_equal(header(&j, "example.com", "/y"), "a=1; d=1"); /* c is host-only */
    assert_string_equal(header(&j, HOST, "/y"), "c=1; a=1; d=1");
    assert_string_equal(header(&j, HOST, "/x"), "a=1; d=1");
    lc_cookie_jar_free(&j);
}

/* Paths (RFC 6265 5.1.4) ------------------------------------------------------ */

static void test_default_path(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store_from(&j, "a=1", HOST, "/foo/bar/baz", true), 0); /* /foo/bar */
    assert_int_equal(store_from(&j, "b=1", HOST, "/foo", true), 0);         /* / */
    assert_int_equal(store_from(&j, "c=1", HOST, "", true), 0);             /* / */
    assert_int_equal(store_from(&j, "d=1", HOST, "/x/y?q=/z/w#/v/u", true), 0); /* /x */
    assert_int_equal(store_from(&j, "e=1; Path=rel/ative", HOST, "/p/q", true), 0); /* /p */
    assert_int_equal(store_from(&j, "f=1; Path=", HOST, "/p/q", true), 0);          /* /p */
    assert_int_equal(store_from(&j, "g=1; Path", HOST, "/p/q/", true), 0);          /* /p/q */
    assert_string_equal(header(&j, HOST, "/foo/bar"), "a=1; b=1; c=1");
    assert_string_equal(header(&j, HOST, "/foo/bar/"), "a=1; b=1; c=1");
    assert_string_equal(header(&j, HOST, "/foo/barx"), "b=1; c=1");
    assert_string_equal(header(&j, HOST, "/foo"), "b=1; c=1");
    assert_string_equal(header(&j, HOST, "/x/z"), "d=1; b=1; c=1");
    assert_string_equal(header(&j, HOST, "/p/q/r"), "g=1; e=1; f=1; b=1; c=1");
    lc_cookie_jar_free(&j);
}

static void test_path_match(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "foo=1; Path=/foo"), 0);
    assert_int_equal(store(&j, "slash=1; Path=/foo/"), 0);
    assert_string_equal(header(&j, HOST, "/foo"), "foo=1");
    assert_string_equal(header(&j, HOST, "/foo?x=1"), "foo=1");
    assert_string_equal(header(&j, HOST, "/foo#frag"), "foo=1");
    assert_string_equal(header(&j, HOST, "/foo/"), "slash=1; foo=1");
    assert_string_equal(header(&j, HOST, "/foo/bar"), "slash=1; foo=1");
    assert_string_equal(header(&j, HOST, "/foobar"), "");
    assert_string_equal(header(&j, HOST, "/fo"), "");
    assert_string_equal(header(&j, HOST, "/"), "");
    assert_string_equal(header(&j, HOST, "/FOO"), ""); /* paths are case-sensitive */
    assert_string_equal(header(&j, HOST, ""), "");
    assert_string_equal(header(&j, HOST, "foo"), ""); /* not absolute: "/" */
    lc_cookie_jar_free(&j);
}

/* Longer paths first, then earlier created; a replacement keeps its place. */
static void test_order_and_replacement(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "root=1; Path=/"), 0);
    assert_int_equal(store(&j, "ab=1; Path=/a/b"), 0);
    assert_int_equal(store(&j, "x=1; Path=/a"), 0);
    assert_int_equal(store(&j, "y=1; Path=/a"), 0);
    assert_string_equal(header(&j, HOST, "/a/b/c"), "ab=1; x=1; y=1; root=1");
    assert_int_equal(store(&j, "x=a-much-longer-value; Path=/a"), 0);
    assert_int_equal(store(&j, "root=; Path=/"), 0);
    assert_string_equal(header(&j, HOST, "/a/b/c"), "ab=1; x=a-much-longer-value; y=1; root=");
    assert_int_equal(store(&j, "x=2; Path=/a"), 0);
    assert_string_equal(header(&j, HOST, "/a/b/c"), "ab=1; x=2; y=1; root=");
    assert_int_equal(j.count, 4);
    /* Same name, another path or domain: another cookie. */
    assert_int_equal(store(&j, "x=3; Path=/a/b"), 0);
    assert_int_equal(store(&j, "x=4; Path=/a; Domain=example.com"), 0);
    assert_string_equal(header(&j, HOST, "/a/b/c"), "ab=1; x=3; x=2; y=1; x=4; root=");
    assert_string_equal(value_of(&j, "x", HOST, "/a/b", true), "3");
    assert_string_equal(value_of(&j, "x", HOST, "/a", true), "2");
    assert_string_equal(value_of(&j, "x", "example.com", "/a", true), "4");
    /* The host-only cookie and the domain cookie for the same name are two. */
    assert_int_equal(store_from(&j, "h=1", "example.com", "/", true), 0);
    assert_int_equal(store_from(&j, "h=2; Domain=example.com", "example.com", "/", true), 0);
    assert_int_equal(j.count, 7); /* h=2 replaced h=1: same name, domain and path (RFC 6265) */
    assert_string_equal(value_of(&j, "h", HOST, "/", true), "2");
    lc_cookie_jar_free(&j);
}

/* Domains (RFC 6265 5.1.3, 5.3 step 6) --------------------------------------- */

static void test_domain_cookie(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "d=1; Domain=.example.com"), 0);
    assert_string_equal(header(&j, "example.com", "/"), "d=1");
    assert_string_equal(header(&j, "www.example.com", "/"), "d=1");
    assert_string_equal(header(&j, "a.b.example.com", "/"), "d=1");
    assert_string_equal(header(&j, "EXAMPLE.Com", "/"), "d=1");
    assert_string_equal(header(&j, "notexample.com", "/"), "");
    assert_string_equal(header(&j, "example.com.evil.org", "/"), "");
    assert_string_equal(header(&j, "evil.com", "/"), "");
    assert_string_equal(header(&j, ".example.com", "/"), ""); /* an empty label: no host */
    assert_string_equal(header(&j, "com", "/"), "");
    lc_cookie_jar_free(&j);
}

static void test_host_only_cookie(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store_from(&j, "h=1", "WWW.Example.com", "/", true), 0);
    assert_string_equal(header(&j, "www.example.com", "/"), "h=1");
    assert_string_equal(header(&j, "www.EXAMPLE.com", "/"), "h=1");
    assert_string_equal(header(&j, "a.www.example.com", "/"), "");
    assert_string_equal(header(&j, "example.com", "/"), "");
    lc_cookie_jar_free(&j);
}

static void test_foreign_domain_refused(void **state)
{
    lc_cookie_jar_t j = {0};
    refused(&j, "a=1; Domain=evil.com", LC_EINVAL);
    refused(&j, "a=1; Domain=ample.com", LC_EINVAL);           /* not at a dot */
    refused(&j, "a=1; Domain=xwww.example.com", LC_EINVAL);
    refused(&j, "a=1; Domain=sub.www.example.com", LC_EINVAL); /* a child, not a parent */
    refused(&j, "a=1; Domain=com", LC_EINVAL);                 /* a top-level domain */
    refused(&j, "a=1; Domain=.com", LC_EINVAL);
    refused(&j, "a=1; Domain=www.example.com.", LC_EINVAL);
    refused(&j, "a=1; Domain=..example.com", LC_EINVAL);
    char longdomain[300];
    memset(longdomain, 'a', sizeof longdomain);
    memcpy(longdomain, "a=1; Domain=", 12);
    longdomain[sizeof longdomain - 1] = '\0';
    refused(&j, longdomain, LC_EINVAL);
    assert_int_equal(store_from(&j, "l=1; Domain=localhost", "localhost", "/", true), 0);
    assert_string_equal(header(&j, "localhost", "/"), "l=1");
    assert_int_equal(store(&j, "e=1; Domain=www.example.com"), 0); /* the host itself */
    assert_string_equal(header(&j, "a.www.example.com", "/"), "e=1");
    lc_cookie_jar_free(&j);
}

static void test_ip_hosts(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store_from(&j, "a=1", "127.0.0.1", "/", false), 0);
    assert_int_equal(store_from(&j, "b=1; Domain=127.0.0.1", "127.0.0.1", "/", false), 0);
    refused_from(&j, "c=1; Domain=0.0.1", "127.0.0.1", LC_EINVAL);
    refused_from(&j, "c=1; Domain=0.1", "127.0.0.1", LC_EINVAL);
    refused_from(&j, "c=1; Domain=example.com", "127.0.0.1", LC_EINVAL);
    assert_string_equal(header(&j, "127.0.0.1", "/"), "a=1; b=1");
    assert_string_equal(header(&j, "x.127.0.0.1", "/"), ""); /* b is host-only */
    /* A name ending like an address may share a domain cookie, an address never does. */
    assert_int_equal(store_from(&j, "n=1; Domain=0.0.1", "h.0.0.1", "/", false), 0);
    assert_string_equal(header(&j, "g.0.0.1", "/"), "n=1");
    assert_string_equal(header(&j, "127.0.0.1", "/"), "a=1; b=1");
    assert_int_equal(store_from(&j, "v6=1", "::1", "/", false), 0);
    assert_int_equal(store_from(&j, "v6b=1", "[::1]", "/", false), 0);
    assert_int_equal(store_from(&j, "v6c=1; Domain=::1", "::1", "/", false), 0); /* itself */
    refused_from(&j, "c=1; Domain=1", "::1", LC_EINVAL);
    refused_from(&j, "c=1; Domain=0:0:1", "::1", LC_EINVAL);
    refused_from(&j, "c=1; Domain=1]", "[::1]", LC_EINVAL);
    assert_string_equal(header(&j, "::1", "/"), "v6=1; v6c=1");
    assert_string_equal(header(&j, "[::1]", "/"), "v6b=1");
    lc_cookie_jar_free(&j);
}

/* Expiry ---------------------------------------------------------------------- */

static void test_max_age(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1; Max-Age=10"), 0);
    assert_string_equal(header_at(&j, HOST, "/", true, NOW + 9999), "a=1");
    assert_string_equal(header_at(&j, HOST, "/", true, NOW + 10000), "");
    assert_int_equal(store(&j, "z=1; Max-Age=0"), 0);
    assert_int_equal(store(&j, "n=1; Max-Age=-5"), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1");
    assert_int_equal(store(&j, "a=1; Max-Age=0"), 0); /* deletes */
    assert_string_equal(header(&j, HOST, "/"), "");
    assert_int_equal(store(&j, "b=1; Max-Age=-1"), 0);
    assert_int_equal(store(&j, "b=1"), 0);
    assert_int_equal(store(&j, "b=1; max-age=-1"), 0);
    assert_string_equal(header(&j, HOST, "/"), "");
    /* Not a number: ignored, so a session cookie. */
    static const char *const junk[] = {"abc", "1x", "", "-", "+5", " 5 x", "1.5", "0x10"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        char sc[64];
        snprintf(sc, sizeof sc, "s=1; Max-Age=%s", junk[i]);
        assert_int_equal(store(&j, sc), 0);
        assert_string_equal(header_at(&j, HOST, "/", true, UINT64_MAX - 1), "s=1");
    }
    assert_int_equal(store(&j, "s=1; Max-Age=999999999999999999999999999999"), 0);
    assert_string_equal(header_at(&j, HOST, "/", true, NOW + 100000000000000ull), "s=1");
    assert_int_equal(lc_cookie_jar_store(&j, "o=1; Max-Age=5", 14, HOST, "/", true,
                                         UINT64_MAX - 10), 0);
    assert_string_equal(header_at(&j, HOST, "/", true, UINT64_MAX - 2), "o=1"); /* s purged */
    lc_cookie_jar_free(&j);
}

static void test_max_age_wins_over_expires(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=100"), 0);
    assert_int_equal(store(&j, "b=1; Max-Age=100; Expires=Thu, 01 Jan 1970 00:00:01 GMT"), 0);
    assert_int_equal(store(&j, "c=1; Max-Age=0; Expires=Fri, 01 Jan 2100 00:00:00 GMT"), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1; b=1");
    assert_string_equal(header_at(&j, HOST, "/", true, NOW + 100000), "");
    lc_cookie_jar_free(&j);
}

static void test_expires(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "a=1; Expires=Wed, 15 Nov 2023 00:00:00 GMT"), 0);
    assert_int_equal(store(&j, "b=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT"), 0);
    assert_int_equal(store(&j, "g=1; Expires=not a date"), 0); /* ignored: a session cookie */
    assert_int_equal(store(&j, "f=1; Expires=Fri, 31 Feb 2100 00:00:00 GMT"), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1; g=1; f=1");
    assert_string_equal(header_at(&j, HOST, "/", true, 1700006400000ull - 1), "a=1; g=1; f=1");
    assert_string_equal(header_at(&j, HOST, "/", true, 1700006400000ull), "g=1; f=1");
    assert_int_equal(store(&j, "g=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"), 0); /* deletes */
    assert_int_equal(store(&j, "f=; expires=Tue, 01-Jan-1980 00:00:00 GMT"), 0);
    assert_string_equal(header(&j, HOST, "/"), "a=1");
    lc_cookie_jar_free(&j);
}

static void check_date(const char *text, uint64_t want)
{
    uint64_t ms = 42;
    if (!lc_cookie_date_parse(text, strlen(text), &ms))
        fail_msg("\"%s\" did not parse", text);
    if (ms != want)
        fail_msg("\"%s\": %llu ms, not %llu", text, (unsigned long long)ms,
                 (unsigned long long)want);
}

static void check_not_date(const char *text)
{
    uint64_t ms = 42;
    if (lc_cookie_date_parse(text, strlen(text), &ms))
        fail_msg("\"%s\" parsed as %llu", text, (unsigned long long)ms);
    assert_int_equal(ms, 42);
}

static void test_date_forms(void **state)
{
    const uint64_t t = 784111777000ull; /* 1994-11-06T08:49:37Z */
    check_date("Sun, 06 Nov 1994 08:49:37 GMT", t);   /* IMF-fixdate */
    check_date("Sunday, 06-Nov-94 08:49:37 GMT", t);  /* RFC 850 */
    check_date("Sun Nov  6 08:49:37 1994", t);        /* asctime */
    check_date("sun, 06 NOV 1994 08:49:37 gmt", t);
    check_date("06 November 1994 8:49:37", t);
    check_date("1994 Nov 6 08:49:37", t);             /* 4 digits are no day-of-month */
    check_date("Sun,06-Nov-1994 08:49:37", t);
    check_date("Thu, 01 Jan 1970 00:00:00 GMT", 0);
    check_date("Wed, 31 Dec 1969 23:59:59 GMT", 0);   /* before the epoch: long expired */
    check_date("Mon, 01 Jan 1601 00:00:00 GMT", 0);
    check_date("Wed, 09 Jun 2021 10:18:14 GMT", 1623233894000ull);
    check_date("Sat, 29 Feb 2020 00:00:00 GMT", 1582934400000ull);
    check_date("Sat, 01 Jan 00 00:00:00 GMT", 946684800000ull);  /* 00: 2000 */
    check_date("Tue, 01 Jan 69 00:00:00 GMT", 3124224000000ull); /* 69: 2069 */
    check_date("Thu, 01 Jan 70 00:00:00 GMT", 0);                /* 70: 1970 */
    check_date("Fri, 31 Dec 9999 23:59:59 GMT", 253402300799000ull);
    check_date("Sun, 06 Nov 1994 08:49:37.123 GMT", t); /* time = hms-time ( non-digit *OCTET ) */
}

static void test_garbage_dates(void **state)
{
    check_not_date("");
    check_not_date("garbage");
    check_not_date("Sun, 06 Nov 1994");             /* no time */
    check_not_date("06 1994 08:49:37");             /* no month */
    check_not_date("Nov 1994 08:49:37");            /* no day (1994 is 4 digits) */
    check_not_date("06 Nov 08:49:37");              /* no year */
    check_not_date("Sun, 32 Nov 1994 08:49:37 GMT");
    check_not_date("Sun, 00 Nov 1994 08:49:37 GMT");
    check_not_date("Sun, 31 Nov 1994 08:49:37 GMT"); /* November has 30 */
    check_not_date("Mon, 29 Feb 2021 00:00:00 GMT");
    check_not_date("Mon, 29 Feb 1900 00:00:00 GMT"); /* not a leap year */
    check_not_date("Sun, 06 Nov 1994 24:00:00 GMT");
    check_not_date("Sun, 06 Nov 1994 08:60:00 GMT");
    check_not_date("Sun, 06 Nov 1994 08:49:60 GMT");
    check_not_date("Sun, 06 Nov 1600 08:49:37 GMT");
    check_not_date("Sun, 06 Nov 12345 08:49:37 GMT");
    check_not_date("Sun, 06 Nov 994 08:49:37 GMT"); /* 3 digits: 994 < 1601 */
    check_not_date("Sun, 06 Nov 1994 008:49:37 GMT");
    check_not_date("Sun, 06 Nov 1994 08:49 GMT");
    check_not_date("Sun, 06 Xyz 1994 08:49:37 GMT");
    check_not_date("99999999999999999999 Nov 1994 08:49:37");
}

/* Purged lazily on store: an expired cookie is not sent, and the next store frees it. */
static void test_expired_purged_on_store(void **state)
{
    lc_cookie_jar_t j = {0}, alone = {0};
    assert_int_equal(store(&j, "old=1; Max-Age=1"), 0);
    assert_string_equal(header_at(&j, HOST, "/", true, NOW + 5000), "");
    lc_value_t v;
    assert_false(lc_cookie_jar_get(&j, "old", 3, HOST, "/", true, NOW + 5000, &v));
    assert_int_equal(j.count, 1);
    assert_int_equal(lc_cookie_jar_store(&j, "b=2", 3, HOST, "/", true, NOW + 5000), 0);
    assert_int_equal(lc_cookie_jar_store(&alone, "b=2", 3, HOST, "/", true, NOW), 0);
    assert_int_equal(j.count, 1);
    assert_int_equal(lc_cookie_jar_bytes(&j), lc_cookie_jar_bytes(&alone));
    assert_memory_equal(j.block, alone.block, alone.used);
    lc_cookie_jar_free(&j);
    lc_cookie_jar_free(&alone);
}

/* Secure, prefixes ------------------------------------------------------------- */

static void test_secure(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_refused(&j, "s=1; Secure", 11, HOST, false, LC_EINVAL);
    assert_int_equal(store(&j, "s=1; Secure"), 0);
    assert_int_equal(store(&j, "p=1"), 0);
    assert_string_equal(header_at(&j, HOST, "/", true, NOW), "s=1; p=1");
    assert_string_equal(header_at(&j, HOST, "/", false, NOW), "p=1");
    assert_string_equal(value_of(&j, "s", HOST, "/", false), "(none)");
    assert_string_equal(value_of(&j, "s", HOST, "/", true), "1");
    assert_int_equal(store(&j, "h=1; HttpOnly"), 0); /* accepted, no effect here */
    assert_string_equal(header_at(&j, HOST, "/", false, NOW), "p=1; h=1");
    lc_cookie_jar_free(&j);
}

static void test_cookie_prefixes(void **state)
{
    lc_cookie_jar_t j = {0};
    refused(&j, "__Secure-a=1", LC_EINVAL);
    refused(&j, "__secure-a=1", LC_EINVAL);
    assert_int_equal(store(&j, "__Secure-a=1; Secure; Domain=example.com; Path=/x"), 0);
    refused(&j, "__Host-a=1; Path=/", LC_EINVAL);
    refused(&j, "__Host-a=1; Secure", LC_EINVAL);
    refused(&j, "__Host-a=1; Secure; Path=/x", LC_EINVAL);
    refused(&j, "__Host-a=1; Secure; Path=/; Domain=www.example.com", LC_EINVAL);
    assert_int_equal(store(&j, "__Host-b=1; Secure; Path=/"), 0);
    assert_string_equal(header(&j, HOST, "/x"), "__Secure-a=1; __Host-b=1");
    lc_cookie_jar_free(&j);
}

/* get() ---------------------------------------------------------------------------- */

static void test_get(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, "token=abc; Path=/api"), 0);
    assert_int_equal(store(&j, "tok=short"), 0);
    assert_string_equal(value_of(&j, "token", HOST, "/api/x", true), "abc");
    assert_string_equal(value_of(&j, "token", HOST, "/", true), "(none)");
    assert_string_equal(value_of(&j, "Token", HOST, "/api", true), "(none)"); /* case counts */
    assert_string_equal(value_of(&j, "to", HOST, "/api", true), "(none)");
    assert_string_equal(value_of(&j, "tok", HOST, "/api", true), "short");
    assert_string_equal(value_of(&j, "token", "other.com", "/api", true), "(none)");
    lc_value_t v;
    assert_true(lc_cookie_jar_get(&j, "token", 5, HOST, "/api", true, NOW, &v));
    assert_true((const uint8_t *)v.data >= j.block && (const uint8_t *)v.data < j.block + j.used);
    lc_cookie_jar_free(&j);
}

/* Limits ---------------------------------------------------------------------------- */

static void test_count_limit(void **state)
{
    lc_cookie_jar_t j = {0};
    char sc[64];
    for (int i = 0; i < LC_COOKIE_JAR_MAX_COUNT; i++) {
        snprintf(sc, sizeof sc, "c%d=%d%s", i, i, i == 7 ? "; Max-Age=1" : "");
        assert_int_equal(store(&j, sc), 0);
    }
    assert_int_equal(j.count, 50);
    refused(&j, "c50=50", LC_ETOOBIG);
    refused(&j, "c50=50; Path=/a", LC_ETOOBIG);
    assert_int_equal(store(&j, "c3=replaced"), 0); /* a replacement is no new cookie */
    assert_int_equal(store(&j, "c4=; Max-Age=0"), 0);
    assert_int_equal(store(&j, "c50=50"), 0);
    refused(&j, "c51=51", LC_ETOOBIG);
    /* Once c7 expired, the store that purges it has room. */
    assert_int_equal(lc_cookie_jar_store(&j, "c51=51", 6, HOST, "/", true, NOW + 1000), 0);
    assert_int_equal(j.count, 50);
    lc_cookie_jar_free(&j);
}

/* Set-Cookie: name=<value of value_len 'v'>[; suffix] into a static buffer. */
static const char *big_cookie(const char *name, size_t value_len, const char *suffix)
{
    static char sc[LC_COOKIE_MAX_HEADER * 2];
    int n = snprintf(sc, sizeof sc, "%s=", name);
    assert_true(n > 0 && (size_t)n + value_len + strlen(suffix) < sizeof sc);
    memset(sc + n, 'v', value_len);
    strcpy(sc + n + value_len, suffix);
    return sc;
}

static void test_cookie_size_limit(void **state)
{
    lc_cookie_jar_t j = {0};
    assert_int_equal(store(&j, big_cookie("a", 4094, "")), 0); /* 4096 bytes */
    refused(&j, big_cookie("b", 4095, ""), LC_ETOOBIG);        /* 4097 */
    refused(&j, big_cookie("b", 4000, "; Path=/" "                                           "
                                      "                                                     "),
            LC_ETOOBIG); /* the attributes count too */
    char path[LC_COOKIE_MAX_PATH + 20];
    memset(path, 'p', sizeof path);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    char sc[sizeof path + 16];
    snprintf(sc, sizeof sc, "p=1; Path=%.*s", LC_COOKIE_MAX_PATH, path);
    assert_int_equal(store(&j, sc), 0);
    snprintf(sc, sizeof sc, "p=1; Path=%.*s", LC_COOKIE_MAX_PATH + 1, path);
    refused(&j, sc, LC_ETOOBIG);
    /* A default path from a long request path is bounded the same way. */
    char req[LC_COOKIE_MAX_PATH + 3];
    memset(req, 'p', sizeof req);
    req[0] = '/';
    req[LC_COOKIE_MAX_PATH + 1] = '/'; /* default path: 1025 bytes */
    req[LC_COOKIE_MAX_PATH + 2] = '\0';
    assert_int_equal(store_from(&j, "d=1", HOST, req, true), LC_ETOOBIG);
    req[LC_COOKIE_MAX_PATH] = '/'; /* 1024 bytes */
    req[LC_COOKIE_MAX_PATH + 1] = 'x';
    assert_int_equal(store_from(&j, "d=1", HOST, req, true), 0);
    lc_cookie_jar_free(&j);
}

static void test_jar_size_limit(void **state)
{
    lc_cookie_jar_t j = {0};
    /* Records of 16 + 2 + 4060 + 15 + 1 = 4094 bytes: four fit in 16 KiB, 8 bytes to spare. */
    static const char *const names[] = {"c1", "c2", "c3", "c4", "c5"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(store(&j, big_cookie(names[i], 4060, "")), 0);
    assert_int_equal(j.used, 4 * 4094);
    assert_int_equal(lc_cookie_jar_bytes(&j), LC_COOKIE_JAR_MAX_BYTES);
    refused(&j, big_cookie(names[4], 4060, ""), LC_ETOOBIG);
    refused(&j, big_cookie(names[4], 1, ""), LC_ETOOBIG);
    refused(&j, big_cookie(names[1], 4070, ""), LC_ETOOBIG); /* growing a replacement */
    assert_int_equal(store(&j, big_cookie(names[1], 4068, "")), 0); /* to the byte */
    assert_int_equal(j.used, LC_COOKIE_JAR_MAX_BYTES);
    assert_int_equal(store(&j, big_cookie(names[1], 10, "")), 0); /* shrinking is fine */
    assert_int_equal(store(&j, big_cookie(names[4], 3000, "")), 0);
    assert_true(lc_cookie_jar_bytes(&j) <= LC_COOKIE_JAR_MAX_BYTES);
    lc_cookie_jar_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_jar_is_tiny),
        cmocka_unit_test(test_store_send_free),
        cmocka_unit_test(test_bytes_of_two_cookies),
        cmocka_unit_test(test_clear_keeps_block),
        cmocka_unit_test(test_header_appends),
        cmocka_unit_test(test_name_value_forms),
        cmocka_unit_test(test_malformed_refused),
        cmocka_unit_test(test_attribute_names_any_case),
        cmocka_unit_test(test_repeated_attributes),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_path_match),
        cmocka_unit_test(test_order_and_replacement),
        cmocka_unit_test(test_domain_cookie),
        cmocka_unit_test(test_host_only_cookie),
        cmocka_unit_test(test_foreign_domain_refused),
        cmocka_unit_test(test_ip_hosts),
        cmocka_unit_test(test_max_age),
        cmocka_unit_test(test_max_age_wins_over_expires),
        cmocka_unit_test(test_expires),
        cmocka_unit_test(test_date_forms),
        cmocka_unit_test(test_garbage_dates),
        cmocka_unit_test(test_expired_purged_on_store),
        cmocka_unit_test(test_secure),
        cmocka_unit_test(test_cookie_prefixes),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_count_limit),
        cmocka_unit_test(test_cookie_size_limit),
        cmocka_unit_test(test_jar_size_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
