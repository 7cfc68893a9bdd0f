/* lc_pem.c — PEM certificate bundles from memory (lc_pem.h). */
#include "lc_pem.h"

#include <limits.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "lc_err.h"

/* Decodes one block's DER as a whole certificate and adds it to store (when
 * given); a certificate already there is not an error. */
static int add_cert(const unsigned char *der, long len, X509_STORE *store, size_t n,
                    char *errmsg, size_t errlen)
{
    const unsigned char *q = der;
    X509 *x = d2i_X509(NULL, &q, len);
    if (x == NULL || q != der + len) {
        X509_free(x);
        return lc_errf(errmsg, errlen, LC_EINVAL, "PEM block %zu is not a valid X.509 certificate",
                       n);
    }
    int rv = 0;
    if (store != NULL && X509_STORE_add_cert(store, x) != 1 &&
        ERR_GET_REASON(ERR_peek_last_error()) != X509_R_CERT_ALREADY_IN_HASH_TABLE)
        rv = lc_errf(errmsg, errlen, LC_ENOMEM, "out of memory");
    X509_free(x);
    return rv;
}

/* The end of the bundle, or why the next block could not be read. */
static int read_failed(size_t n, char *errmsg, size_t errlen)
{
    unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
        return n > 0 ? 0 : lc_errf(errmsg, errlen, LC_EINVAL, "no PEM certificate found");
    if (ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "out of memory");
    return lc_errf(errmsg, errlen, LC_EINVAL, "malformed PEM block %zu", n + 1);
}

int lc_pem_load_certs(const char *pem, size_t len, X509_STORE *store, char *errmsg,
                      size_t errlen)
{
    if (len > INT_MAX)
        return lc_errf(errmsg, errlen, LC_EINVAL, "PEM bundle too large");
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "out of memory");
    int rv = 0;
    for (size_t n = 0; rv == 0; n++) {
        char *name = NULL, *header = NULL;
        unsigned char *der = NULL;
        long der_len = 0;
        if (PEM_read_bio(bio, &name, &header, &der, &der_len) != 1) {
            rv = read_failed(n, errmsg, errlen);
            break;
        }
        if (strcmp(name, PEM_STRING_X509) != 0)
            rv = lc_errf(errmsg, errlen, LC_EINVAL, "PEM block %zu is not a CERTIFICATE", n + 1);
        else
            rv = add_cert(der, der_len, store, n + 1, errmsg, errlen);
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(der);
    }
    BIO_free(bio);
    ERR_clear_error();
    return rv;
}
