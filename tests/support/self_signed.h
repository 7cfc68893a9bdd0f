/* self_signed.h — tests and fuzz targets: a self-signed certificate for a key, usable as a
 * server's certificate for localhost and 127.0.0.1 and as its own CA. */
#ifndef TESTS_SUPPORT_SELF_SIGNED_H
#define TESTS_SUPPORT_SELF_SIGNED_H

#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* A certificate for key (CN localhost, SAN localhost and 127.0.0.1, CA:TRUE), valid from an
 * hour ago for a year, signed with key; NULL when OpenSSL fails. */
static inline X509 *test_self_signed(EVP_PKEY *key)
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

#endif
