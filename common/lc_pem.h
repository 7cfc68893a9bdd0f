/* lc_pem.h — PEM bundles of CA certificates held in memory: validated, and
 * loaded into an OpenSSL X509_STORE, without a file name ever reaching OpenSSL. */
#ifndef LC_PEM_H
#define LC_PEM_H

#include <stddef.h>

#include <openssl/x509.h>

/* Reads every PEM block of pem[0..len): each must be a CERTIFICATE that
 * decodes as X.509, and there must be at least one (text between blocks, as
 * in ca-certificates.crt, is skipped). When store is not NULL, adds each
 * certificate to it. Returns 0, LC_EINVAL with errmsg ("no PEM certificate
 * found", "PEM block 2 is not a CERTIFICATE", …; never the bundle's bytes) or
 * LC_ENOMEM. Clears OpenSSL's error queue either way. */
int lc_pem_load_certs(const char *pem, size_t len, X509_STORE *store, char *errmsg,
                      size_t errlen);

#endif
