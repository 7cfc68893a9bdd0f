/* test_certs.h — for unit tests of TLS: a CA, a rogue CA and certificates
 * made with the openssl CLI in a temporary directory, and contexts built on
 * them with lc_tls_context_new. */
#ifndef TESTS_UNIT_TEST_CERTS_H
#define TESTS_UNIT_TEST_CERTS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_tls_channel.h"

static char g_dir[64];

/* g_dir/name; the result lives until the 16th next call. */
static inline const char *file_in_dir(const char *name)
{
    static char paths[16][160];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, sizeof paths[0], "%s/%s", g_dir, name);
    return p;
}

static inline int run(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[1200];
    snprintf(full, sizeof full, "%s >>%s/openssl.log 2>&1", cmd, g_dir);
    int rv = system(full);
    if (rv != 0)
        fprintf(stderr, "failed (%d): %s (see %s/openssl.log)\n", rv, cmd, g_dir);
    return rv;
}

static const char OPENSSL_CNF[] = "[req]\n"
                                  "distinguished_name = dn\n"
                                  "prompt = no\n"
                                  "[dn]\n"
                                  "CN = unused\n"
                                  "[v3_ca]\n"
                                  "basicConstraints = critical,CA:TRUE\n"
                                  "keyUsage = critical,keyCertSign,cRLSign\n"
                                  "subjectKeyIdentifier = hash\n"
                                  "[server]\n"
                                  "basicConstraints = CA:FALSE\n"
                                  "keyUsage = critical,digitalSignature\n"
                                  "extendedKeyUsage = serverAuth\n"
                                  "subjectAltName = IP:127.0.0.1,DNS:master.test\n"
                                  "[client]\n"
                                  "basicConstraints = CA:FALSE\n"
                                  "keyUsage = critical,digitalSignature\n"
                                  "extendedKeyUsage = clientAuth\n";

#define EC_KEY_ARGS "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

static inline int make_ca(const char *name, const char *cn)
{
    return run("openssl req -config %s -x509 " EC_KEY_ARGS " -keyout %s/%s.key -out %s/%s.pem "
               "-subj /CN=%s -days 2 -extensions v3_ca",
               file_in_dir("openssl.cnf"), g_dir, name, g_dir, name, cn);
}

static inline int make_leaf(const char *name, const char *cn, const char *ca, const char *ext, int serial)
{
    if (run("openssl req -config %s -new " EC_KEY_ARGS " -keyout %s/%s.key -out %s/%s.csr "
            "-subj /CN=%s",
            file_in_dir("openssl.cnf"), g_dir, name, g_dir, name, cn) != 0)
        return -1;
    return run("openssl x509 -req -in %s/%s.csr -CA %s/%s.pem -CAkey %s/%s.key -set_serial %d "
               "-days 2 -extfile %s -extensions %s -out %s/%s.pem",
               g_dir, name, g_dir, ca, g_dir, ca, serial, file_in_dir("openssl.cnf"), ext, g_dir,
               name);
}

static inline int remove_dir(void)
{
    if (g_dir[0] == '\0')
        return 0;
    DIR *d = opendir(g_dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        }
        closedir(d);
    }
    int rv = rmdir(g_dir);
    g_dir[0] = '\0';
    return rv;
}

/* Makes g_dir with the CAs and certificates the TLS tests use: ca, rogue
 * (another CA), server (master.test, IP 127.0.0.1), client (worker-1) and
 * rogue-client (from the rogue CA). Returns 0 or -1. */
static inline int test_certs_setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/lc_tls_ut.XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        g_dir[0] = '\0';
        return -1;
    }
    FILE *f = fopen(file_in_dir("openssl.cnf"), "w");
    if (f == NULL)
        return -1;
    fputs(OPENSSL_CNF, f);
    fclose(f);
    if (make_ca("ca", "lc-test-ca") != 0 || make_ca("rogue", "lc-rogue-ca") != 0 ||
        make_leaf("server", "master.test", "ca", "server", 2) != 0 ||
        make_leaf("client", "worker-1", "ca", "client", 3) != 0 ||
        make_leaf("rogue-client", "worker-rogue", "rogue", "client", 4) != 0) {
        remove_dir();
        return -1;
    }
    return 0;
}

static inline int test_certs_teardown(void)
{
    return remove_dir();
}

/* A context from the files of g_dir (asserted to load). */
static inline SSL_CTX *ctx_from(bool server, const char *cert, const char *key, const char *ca)
{
    char err[256] = "";
    lc_tls_files_t files = {.cert = file_in_dir(cert), .key = file_in_dir(key),
                            .ca = file_in_dir(ca)};
    SSL_CTX *ctx = NULL;
    int rv = lc_tls_context_new(&ctx, server, &files, err, sizeof err);
    if (rv != 0)
        fprintf(stderr, "lc_tls_context_new: %s\n", err);
    assert_int_equal(rv, 0);
    assert_non_null(ctx);
    return ctx;
}

static inline SSL_CTX *server_ctx(void)
{
    return ctx_from(true, "server.pem", "server.key", "ca.pem");
}

static inline SSL_CTX *client_ctx(void)
{
    return ctx_from(false, "client.pem", "client.key", "ca.pem");
}


#endif
