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

static bool fuzz_write_pem(const char *path, EVP_PKEY *key, X509 *cert)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1
                  : PEM_write_X509(f, cert) == 1;
    return fclose(f) == 0 && ok;
}

static X509 *fuzz_self_signed(EVP_PKEY *key)
{
    X509 *x = X509_new();
    if (x == NULL)
        return NULL;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24 * 365);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
                               -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    static const char *const exts[][2] = {{"basicConstraints", "critical,CA:TRUE"},
                                          {"keyUsage", "digitalSignature,keyCertSign"},
                                          {"subjectAltName", "DNS:localhost,IP:127.0.0.1"}};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        X509_EXTENSION *e = X509V3_EXT_conf(NULL, &v3, exts[i][0], exts[i][1]);
        if (e == NULL) {
            X509_free(x);
            return NULL;
        }
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
    }
    if (X509_sign(x, key, EVP_sha256()) == 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* A context of lc_tls_context_new (server or client) with the certificate
 * as its own, its key, and as the CA. NULL on failure (printed). */
static SSL_CTX *fuzz_tls_context(bool server)
{
    char dir[] = "/tmp/lc-fuzz-tls-XXXXXX", cert[64], key[64], err[256];
    SSL_CTX *ctx = NULL;
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    X509 *x = pkey ? fuzz_self_signed(pkey) : NULL;
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
