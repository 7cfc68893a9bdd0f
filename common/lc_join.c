/* lc_join.c — join secret loading and HMAC-SHA256 challenge answers. */
#include "lc_join.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lc_err.h"
#include "lc_file.h"

int lc_join_secret_load(const char *path, lc_join_secret_t *out, char *errmsg, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    int rv = lc_file_read(path, sizeof out->bytes, &buf, &n, errmsg, errlen);
    if (rv != 0 && rv != LC_ETOOBIG)
        return rv;
    while (rv == 0 && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    if (rv == LC_ETOOBIG || n < LC_JOIN_SECRET_MIN) {
        free(buf);
        return lc_errf(errmsg, errlen, LC_EINVAL, "%s: a join secret must be %u to %u bytes",
                       path, LC_JOIN_SECRET_MIN, LC_JOIN_SECRET_MAX);
    }
    memcpy(out->bytes, buf, n);
    out->len = n;
    OPENSSL_cleanse(buf, n);
    free(buf);
    return 0;
}

int lc_join_nonce(uint8_t nonce[LC_JOIN_NONCE_LEN])
{
    return getrandom(nonce, LC_JOIN_NONCE_LEN, 0) == (ssize_t)LC_JOIN_NONCE_LEN ? 0 : LC_EIO;
}

int lc_join_proof(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                  uint8_t proof[LC_JOIN_PROOF_LEN])
{
    unsigned len = 0;
    if (HMAC(EVP_sha256(), secret->bytes, (int)secret->len, nonce, nonce_len, proof, &len) == NULL ||
        len != LC_JOIN_PROOF_LEN)
        return LC_EIO;
    return 0;
}

bool lc_join_verify(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                    const uint8_t *proof, size_t proof_len)
{
    uint8_t expected[LC_JOIN_PROOF_LEN];
    if (proof_len != LC_JOIN_PROOF_LEN || lc_join_proof(secret, nonce, nonce_len, expected) != 0)
        return false;
    return CRYPTO_memcmp(expected, proof, LC_JOIN_PROOF_LEN) == 0;
}

#define JOIN_V2_LABEL "lc-join-v2"

int lc_join_proof_for(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                      const char *worker_id, uint8_t proof[LC_JOIN_PROOF_LEN])
{
    uint8_t msg[sizeof JOIN_V2_LABEL + 64 + 128];
    size_t id_len = strlen(worker_id);
    if (nonce_len > 64 || id_len > 128)
        return LC_EINVAL;
    memcpy(msg, JOIN_V2_LABEL, sizeof JOIN_V2_LABEL); /* with its NUL */
    memcpy(msg + sizeof JOIN_V2_LABEL, nonce, nonce_len);
    memcpy(msg + sizeof JOIN_V2_LABEL + nonce_len, worker_id, id_len);
    return lc_join_proof(secret, msg, sizeof JOIN_V2_LABEL + nonce_len + id_len, proof);
}

bool lc_join_verify_for(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                        const char *worker_id, const uint8_t *proof, size_t proof_len)
{
    uint8_t expected[LC_JOIN_PROOF_LEN];
    if (proof_len != LC_JOIN_PROOF_LEN ||
        lc_join_proof_for(secret, nonce, nonce_len, worker_id, expected) != 0)
        return false;
    return CRYPTO_memcmp(expected, proof, LC_JOIN_PROOF_LEN) == 0;
}
