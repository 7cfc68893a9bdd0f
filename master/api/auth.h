/* auth.h — API tokens: generation, SHA-256 hashing, bearer parsing, the
 * caller's identity, and the first admin token at bootstrap. */
#ifndef MASTER_AUTH_H
#define MASTER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "master.h"
#include "store.h"

#define AUTH_TOKEN_PREFIX "lct_"
#define AUTH_TOKEN_BYTES 32       /* 256 random bits per secret */
#define AUTH_TOKEN_LEN 52         /* "lct_" + 44 base64url characters (43 kept) + NUL, rounded up */
#define AUTH_TOKEN_MIN 16         /* shortest secret accepted from a token file */
#define AUTH_TOKEN_MAX 256        /* longest bearer token looked at */
#define AUTH_ID_LEN 24            /* "tok_" + 16 hex digits + NUL, rounded up */

typedef enum auth_role_e { AUTH_ROLE_ADMIN = 1, AUTH_ROLE_TENANT = 2 } auth_role_t;

/* Who is calling, as their token says. */
typedef struct auth_identity_s {
    auth_role_t role;
    char tenant[128]; /* "" for admin */
    char token_id[64];
} auth_identity_t;

/* A new secret "lct_<43 base64url characters>" from getrandom.
 * OUT: token (AUTH_TOKEN_LEN bytes). Returns 0 or LC_EIO. */
int auth_token_new(char token[AUTH_TOKEN_LEN]);
/* A new public token handle "tok_<16 hex digits>". Returns 0 or LC_EIO. */
int auth_token_id_new(char id[AUTH_ID_LEN]);

/* SHA-256 of the token's len bytes. Returns 0 or LC_EIO. */
int auth_hash(const char *token, size_t len, uint8_t out[STORE_TOKEN_HASH_LEN]);

/* Whether text[0..len) is usable as a token: AUTH_TOKEN_MIN..AUTH_TOKEN_MAX
 * characters of RFC 6750's b64token set (letters, digits, -._~+/ then '='). */
bool auth_token_format_ok(const char *text, size_t len);

/* Finds the token in an Authorization header value "Bearer <token>" (scheme
 * case-insensitive, spaces around the token allowed). OUT: token, len.
 * Returns 0, or LC_EINVAL when absent, another scheme or malformed. */
int auth_bearer_parse(const char *header, const char **token, size_t *len);

/* The identity of an Authorization header value (NULL when absent).
 * Returns 0; LC_ENOTFOUND for a missing, malformed or unknown token;
 * LC_EIO when the store failed. */
int auth_identify(store_t *s, const char *header, auth_identity_t *out);

/* Whether an Authorization header value carries the token whose SHA-256 is
 * hash (compared in constant time). */
bool auth_header_matches(const char *header, const uint8_t hash[STORE_TOKEN_HASH_LEN]);

/* Reads the one token in a token file (flag names it in errors). OUT: hash.
 * Returns 0, LC_ENOTFOUND when the file does not exist, or LC_EINVAL /
 * LC_EIO with errmsg. */
int auth_token_file_read(const char *flag, const char *path, uint8_t hash[STORE_TOKEN_HASH_LEN],
                         char *errmsg, size_t errlen);

/* --admin-token-file: reads the token in path, or when the file does not
 * exist generates one and creates the file (mode 0600; a master starting at
 * the same time with the same path reads the winner's token). OUT: hash;
 * *created tells whether this call wrote the file. Returns 0 or an error
 * with errmsg. */
int auth_token_file_load(const char *path, uint8_t hash[STORE_TOKEN_HASH_LEN], bool *created,
                         char *errmsg, size_t errlen);

/* On becoming leader: makes sure tenant "default" exists and, once the log
 * is applied, that the cluster has an admin token (the --admin-token-file
 * one, or a generated one logged once). */
void auth_on_leader(master_t *m);

#endif
