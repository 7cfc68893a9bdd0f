/* fuzz_tls_cert.h — a throwaway self-signed certificate (its own CA) made
 * with OpenSSL at first use, written into a temporary directory for
 * lc_tls_context_new (which takes paths) and removed again: no key material
 * in the repository. */
#ifndef TESTS_FUZZ_TLS_CERT_H
#define TESTS_FUZZ_TLS_CERT_H

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lc_tls_channel.h"
#include "../support/self_signed.h"

static bool fuzz_write_pem(const char *path, EVP_PKEY *key, X509 *cert)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1
                  : PEM_write_X509(f, cert) == 1;
    return fclose(f) == 0 && ok;
}

/* A context of lc_tls_context_new (server or client) with the certificate
 * as its own, its key, and as the CA. NULL on failure (printed). */
static SSL_CTX *fuzz_tls_context(bool server)
{
    char dir[] = "/tmp/lc-fuzz-tls-XXXXXX", cert[64], key[64], err[256];
    SSL_CTX *ctx = NULL;
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    X509 *x = pkey ? test_self_signed(pkey) : NULL;
    if (x == NULL || mkdtemp(dir) == NULL) {
        fprintf(stderr, "fuzz: cannot make a test certificate\n");
        goto done;
    }
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    lc_tls_files_t files = {cert, key, cert};
    if (!fuzz_write_pem(cert, NULL, x) || !fuzz_write_pem(key, pkey, NULL))
        fprintf(stderr, "fuzz: cannot write %s\n", dir);
    else if (lc_tls_context_new(&ctx, server, &files, err, sizeof err) != 0)
        fprintf(stderr, "fuzz: %s\n", err);
    unlink(cert);
    unlink(key);
    rmdir(dir);
done:
    X509_free(x);
    EVP_PKEY_free(pkey);
    return ctx;
}

#endif
