/* lc_join.h — the join secret shared by masters and workers: loading it, and
 * the HMAC-SHA256 answer to a master's challenge nonce. */
#ifndef LC_JOIN_H
#define LC_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LC_JOIN_SECRET_MIN 16u   /* bytes */
#define LC_JOIN_SECRET_MAX 4096u
#define LC_JOIN_NONCE_LEN 32u
#define LC_JOIN_PROOF_LEN 32u    /* SHA-256 */

typedef struct lc_join_secret_s {
    uint8_t bytes[LC_JOIN_SECRET_MAX];
    size_t len; /* 0: no secret configured */
} lc_join_secret_t;

/* Reads a secret file (trailing newlines dropped). Returns 0, or LC_EINVAL /
 * LC_EIO / LC_ENOMEM with errmsg ("<path>: a join secret must be 16 to 4096
 * bytes", "<path>: <strerror>"). */
int lc_join_secret_load(const char *path, lc_join_secret_t *out, char *errmsg, size_t errlen);

/* Fills a fresh random nonce. Returns 0 or LC_EIO. */
int lc_join_nonce(uint8_t nonce[LC_JOIN_NONCE_LEN]);

/* proof = HMAC-SHA256(secret, nonce). Returns 0 or LC_EIO. */
int lc_join_proof(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                  uint8_t proof[LC_JOIN_PROOF_LEN]);

/* Whether proof answers nonce under secret (constant-time comparison). */
bool lc_join_verify(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                    const uint8_t *proof, size_t proof_len);

/* A worker's join proof binds its id: HMAC-SHA256(secret, "lc-join-v2" NUL
 * nonce worker_id), so a proof made for one id (or relayed from another
 * connection) is useless for any other. nonce_len ≤ 64, id ≤ 128 bytes.
 * Returns 0, LC_EINVAL or LC_EIO. */
int lc_join_proof_for(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                      const char *worker_id, uint8_t proof[LC_JOIN_PROOF_LEN]);
bool lc_join_verify_for(const lc_join_secret_t *secret, const uint8_t *nonce, size_t nonce_len,
                        const char *worker_id, const uint8_t *proof, size_t proof_len);

#endif
