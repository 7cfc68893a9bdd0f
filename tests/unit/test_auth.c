/* test_auth.c — API tokens (master/auth.c): format and entropy, SHA-256,
 * bearer parsing, identities from the store, the admin token file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "lc_err.h"
#include "store.h"

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void test_token_format(void **state)
{
    char token[AUTH_TOKEN_LEN];
    assert_int_equal(auth_token_new(token), 0);
    assert_int_equal(strncmp(token, "lct_", 4), 0);
    /* 32 random bytes are 43 base64url characters: 256 bits, twice the minimum. */
    assert_int_equal(strlen(token), 4 + 43);
    assert_int_equal(strspn(token + 4, b64url), 43);
    assert_true(auth_token_format_ok(token, strlen(token)));
}

/* Many tokens: all distinct, and every character position takes many values
 * (a stuck byte or a short read from getrandom would show here). */
static void test_token_entropy(void **state)
{
    enum { N = 2000 };
    char (*tokens)[AUTH_TOKEN_LEN] = calloc(N, AUTH_TOKEN_LEN);
    assert_non_null(tokens);
    for (int i = 0; i < N; i++)
        assert_int_equal(auth_token_new(tokens[i]), 0);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            assert_string_not_equal(tokens[i], tokens[j]);
    for (size_t pos = 4; pos < 4 + 42; pos++) {
        int seen[64] = {0}, distinct = 0;
        for (int i = 0; i < N; i++)
            seen[strchr(b64url, tokens[i][pos]) - b64url]++;
        for (int c = 0; c < 64; c++)
            distinct += seen[c] > 0;
        assert_true(distinct >= 60);
    }
    free(tokens);
}

static void test_token_id(void **state)
{
    char a[AUTH_ID_LEN], b[AUTH_ID_LEN];
    assert_int_equal(auth_token_id_new(a), 0);
    assert_int_equal(auth_token_id_new(b), 0);
    assert_int_equal(strlen(a), 4 + 16);
    assert_int_equal(strncmp(a, "tok_", 4), 0);
    assert_int_equal(strspn(a + 4, "0123456789abcdef"), 16);
    assert_string_not_equal(a, b);
}

static void test_hash(void **state)
{
    static const uint8_t abc[32] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
        0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    uint8_t h[32], h2[32];
    assert_int_equal(auth_hash("abc", 3, h), 0);
    assert_memory_equal(h, abc, 32);
    /* Only len bytes count: the same prefix of a longer buffer hashes alike. */
    assert_int_equal(auth_hash("abcdef", 3, h2), 0);
    assert_memory_equal(h, h2, 32);
}

static void test_format_ok(void **state)
{
    assert_true(auth_token_format_ok("abcdefghijklmnop", 16));
    assert_false(auth_token_format_ok("abcdefghijklmno", 15)); /* too short */
    assert_true(auth_token_format_ok("abcdefghijklmn==", 16)); /* padding at the end */
    assert_false(auth_token_format_ok("abcdefg=hijklmno", 16));
    assert_false(auth_token_format_ok("================", 16));
    assert_true(auth_token_format_ok("a-b.c_d~e+f/ghijk", 17));
    assert_false(auth_token_format_ok("abcdefghijklmno!", 16));
    assert_false(auth_token_format_ok("abcdefgh\0jklmnop", 16)); /* a NUL inside */
    char long_token[AUTH_TOKEN_MAX + 2];
    memset(long_token, 'x', sizeof long_token);
    assert_true(auth_token_format_ok(long_token, AUTH_TOKEN_MAX));
    assert_false(auth_token_format_ok(long_token, AUTH_TOKEN_MAX + 1));
}

/* parses(header, expected token or NULL for a refusal) */
static void parses(const char *header, const char *expected)
{
    const char *token = NULL;
    size_t len = 0;
    int rv = auth_bearer_parse(header, &token, &len);
    if (expected == NULL) {
        assert_int_equal(rv, LC_EINVAL);
        return;
    }
    assert_int_equal(rv, 0);
    assert_int_equal(len, strlen(expected));
    assert_memory_equal(token, expected, len);
}

static void test_bearer_parse(void **state)
{
    parses("Bearer abc", "abc");
    parses("bearer abc", "abc");
    parses("BEARER abc", "abc");
    parses("Bearer   abc  ", "abc");
    parses("  Bearer\tabc\t", "abc");
    parses("Bearer lct_a-b_c==", "lct_a-b_c==");
    parses(NULL, NULL);
    parses("", NULL);
    parses("Bearer", NULL);
    parses("Bearer ", NULL);
    parses("Bearer    ", NULL);
    parses("Bearerabc", NULL);
    parses("Basic YWxhZGRpbjpvcGVuc2VzYW1l", NULL);
    parses("Bearer abc def", NULL);   /* two tokens */
    parses("Bearer ab\x01" "c", NULL); /* a control character */
    parses("Bearer ab\x7f" "c", NULL);
    parses("Token abc", NULL);
    char header[16 + AUTH_TOKEN_MAX + 2];
    memset(header, 'x', sizeof header);
    memcpy(header, "Bearer ", 7);
    header[7 + AUTH_TOKEN_MAX] = '\0';
    const char *token;
    size_t len;
    assert_int_equal(auth_bearer_parse(header, &token, &len), 0);
    assert_int_equal(len, AUTH_TOKEN_MAX);
    header[7 + AUTH_TOKEN_MAX] = 'x';
    header[7 + AUTH_TOKEN_MAX + 1] = '\0';
    parses(header, NULL);
}

static void put_token(store_t *s, const char *id, const char *secret, const char *role,
                      const char *tenant)
{
    uint8_t hash[32];
    assert_int_equal(auth_hash(secret, strlen(secret), hash), 0);
    Lc__PutToken pt = LC__PUT_TOKEN__INIT;
    pt.id = (char *)id;
    pt.hash.data = hash;
    pt.hash.len = sizeof hash;
    pt.role = (char *)role;
    pt.tenant = (char *)tenant;
    pt.name = "";
    pt.created_ms = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_PUT_TOKEN;
    cmd.put_token = &pt;
    assert_int_equal(store_apply(s, &cmd), 0);
}

static void test_identify(void **state)
{
    store_t *s;
    char err[256], admin[AUTH_TOKEN_LEN], tenant[AUTH_TOKEN_LEN], header[512];
    assert_int_equal(store_open(&s, err, sizeof err), 0);
    Lc__CreateTenant ct = LC__CREATE_TENANT__INIT;
    ct.name = "team-a";
    ct.weight = 2;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_TENANT;
    cmd.create_tenant = &ct;
    assert_int_equal(store_apply(s, &cmd), 0);
    assert_int_equal(auth_token_new(admin), 0);
    assert_int_equal(auth_token_new(tenant), 0);
    put_token(s, "tok_admin", admin, "admin", "");
    put_token(s, "tok_a", tenant, "tenant", "team-a");

    auth_identity_t who;
    snprintf(header, sizeof header, "Bearer %s", admin);
    assert_int_equal(auth_identify(s, header, &who), 0);
    assert_int_equal(who.role, AUTH_ROLE_ADMIN);
    assert_string_equal(who.tenant, "");
    assert_string_equal(who.token_id, "tok_admin");
    snprintf(header, sizeof header, "bearer  %s ", tenant);
    assert_int_equal(auth_identify(s, header, &who), 0);
    assert_int_equal(who.role, AUTH_ROLE_TENANT);
    assert_string_equal(who.tenant, "team-a");

    /* A token one character off, a prefix of it, none: all unknown. */
    snprintf(header, sizeof header, "Bearer %s", tenant);
    header[strlen(header) - 1] ^= 1;
    assert_int_equal(auth_identify(s, header, &who), LC_ENOTFOUND);
    snprintf(header, sizeof header, "Bearer %.20s", tenant);
    assert_int_equal(auth_identify(s, header, &who), LC_ENOTFOUND);
    assert_int_equal(auth_identify(s, NULL, &who), LC_ENOTFOUND);
    assert_int_equal(auth_identify(s, "Bearer short", &who), LC_ENOTFOUND);

    /* Revoked: unknown at once. */
    Lc__RevokeToken rt = LC__REVOKE_TOKEN__INIT;
    rt.id = "tok_a";
    cmd.cmd_case = LC__COMMAND__CMD_REVOKE_TOKEN;
    cmd.revoke_token = &rt;
    assert_int_equal(store_apply(s, &cmd), 0);
    snprintf(header, sizeof header, "Bearer %s", tenant);
    assert_int_equal(auth_identify(s, header, &who), LC_ENOTFOUND);
    store_close(s);
}

static void test_token_file(void **state)
{
    char dir[] = "/tmp/lc-test-auth.XXXXXX", path[128], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/admin.token", dir);
    uint8_t h1[32], h2[32], expected[32];
    bool created;
    assert_int_equal(auth_token_file_load(path, h1, &created, err, sizeof err), 0);
    assert_true(created);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char buf[128] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_int_equal(strlen(buf), 4 + 43 + 1); /* the token and a newline */
    assert_int_equal(auth_hash(buf, 4 + 43, expected), 0);
    assert_memory_equal(h1, expected, 32);
    /* The second master reads the same token. */
    assert_int_equal(auth_token_file_load(path, h2, &created, err, sizeof err), 0);
    assert_false(created);
    assert_memory_equal(h1, h2, 32);

    /* An operator's own token, with trailing whitespace. */
    f = fopen(path, "w");
    fputs("my-own-admin-token-0123456789  \r\n", f);
    fclose(f);
    assert_int_equal(auth_token_file_load(path, h2, &created, err, sizeof err), 0);
    assert_int_equal(auth_hash("my-own-admin-token-0123456789", 29, expected), 0);
    assert_memory_equal(h2, expected, 32);
    /* Refused: too short, two words. */
    f = fopen(path, "w");
    fputs("short\n", f);
    fclose(f);
    assert_int_equal(auth_token_file_load(path, h2, &created, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "admin.token"));
    f = fopen(path, "w");
    fputs("first-token-0123456789 second-token-0123456789\n", f);
    fclose(f);
    assert_int_equal(auth_token_file_load(path, h2, &created, err, sizeof err), LC_EINVAL);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_format), cmocka_unit_test(test_token_entropy),
        cmocka_unit_test(test_token_id),     cmocka_unit_test(test_hash),
        cmocka_unit_test(test_format_ok),    cmocka_unit_test(test_bearer_parse),
        cmocka_unit_test(test_identify),     cmocka_unit_test(test_token_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
