/* tls_keys.c — the traffic keys of a finished handshake, for tls_record.h: TLS 1.3's from the
 * application traffic secrets the keylog callback gave (RFC 8446 7.3), TLS 1.2's from the
 * master secret's key block (RFC 5246 6.3); and TLS 1.3's key updates. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/kdf.h>

#include "lc_err.h"
#include "tls_record.h"

/* Keylog */

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Decodes the hex word at s into out; its length, or 0 when it is not hex or too long. */
static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (s[0] != '\0' && s[0] != ' ') {
        int hi = hex_digit(s[0]), lo = s[1] == '\0' ? -1 : hex_digit(s[1]);
        if (hi < 0 || lo < 0 || n == cap)
            return 0;
        out[n++] = (uint8_t)(hi << 4 | lo);
        s += 2;
    }
    return n;
}

void worker_tls_seen_keylog(worker_tls_seen_t *seen, const char *line)
{
    static const char client[] = "CLIENT_TRAFFIC_SECRET_0 ", server[] = "SERVER_TRAFFIC_SECRET_0 ";
    bool is_client = strncmp(line, client, sizeof client - 1) == 0;
    if (!is_client && strncmp(line, server, sizeof server - 1) != 0)
        return;
    const char *random = line + sizeof client - 1, *secret = strchr(random, ' ');
    if (secret == NULL)
        return;
    uint8_t *out = is_client ? seen->client_secret : seen->server_secret;
    size_t n = unhex(secret + 1, out, sizeof seen->client_secret);
    if (n != 32 && n != 48)
        return;
    seen->secrets_seen |= is_client ? 1 : 2;
    seen->secret_len = (uint8_t)n;
}

void worker_tls_seen_msg(worker_tls_seen_t *seen, int content_type, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (content_type == SSL3_RT_HANDSHAKE && len >= 1 && p[0] == SSL3_MT_KEY_UPDATE)
        seen->key_updated = true;
}

/* Key derivation */

/* HKDF-Expand-Label(secret, label, "", len) of RFC 8446 7.1. */
static int expand_label(const char *digest, const uint8_t *secret, size_t secret_len,
                        const char *label, uint8_t *out, size_t len)
{
    uint8_t info[2 + 1 + 32 + 1];
    size_t label_len = strlen("tls13 ") + strlen(label);
    assert(label_len <= 32 && len <= 255);
    info[0] = 0;
    info[1] = (uint8_t)len;
    info[2] = (uint8_t)label_len;
    memcpy(info + 3, "tls13 ", 6);
    memcpy(info + 9, label, strlen(label));
    info[3 + label_len] = 0; /* no context */
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, secret_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, 4 + label_len),
        OSSL_PARAM_construct_end(),
    };
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *kctx = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    int ok = kctx != NULL && EVP_KDF_derive(kctx, out, len, params) == 1;
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    return ok ? 0 : LC_ENOMEM;
}

/* The key and IV of one direction from its traffic secret (RFC 8446 7.3). */
static int keys_from_secret(const worker_tls_record_t *rec, worker_tls_dir_t *dir)
{
    if (expand_label(rec->digest, dir->secret, rec->secret_len, "key", dir->key, rec->key_len))
        return LC_ENOMEM;
    return expand_label(rec->digest, dir->secret, rec->secret_len, "iv", dir->iv, 12);
}

int worker_tls_record_update(const worker_tls_record_t *rec, worker_tls_dir_t *dir)
{
    assert(rec->tls13);
    uint8_t next[48];
    if (expand_label(rec->digest, dir->secret, rec->secret_len, "traffic upd", next,
                     rec->secret_len) != 0)
        return LC_ENOMEM;
    memcpy(dir->secret, next, rec->secret_len);
    dir->seq = 0;
    return keys_from_secret(rec, dir);
}

/* TLS 1.2's key block: PRF(master, "key expansion", server_random + client_random). */
static int key_block(SSL *ssl, const char *digest, uint8_t *out, size_t len)
{
    uint8_t master[48], seed[13 + 2 * SSL3_RANDOM_SIZE];
    size_t master_len = SSL_SESSION_get_master_key(SSL_get_session(ssl), master, sizeof master);
    memcpy(seed, "key expansion", 13);
    if (master_len == 0 ||
        SSL_get_server_random(ssl, seed + 13, SSL3_RANDOM_SIZE) != SSL3_RANDOM_SIZE ||
        SSL_get_client_random(ssl, seed + 13 + SSL3_RANDOM_SIZE, SSL3_RANDOM_SIZE) !=
            SSL3_RANDOM_SIZE)
        return LC_EINVAL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, master, master_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, seed, sizeof seed),
        OSSL_PARAM_construct_end(),
    };
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS1-PRF", NULL);
    EVP_KDF_CTX *kctx = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    int ok = kctx != NULL && EVP_KDF_derive(kctx, out, len, params) == 1;
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    OPENSSL_cleanse(master, sizeof master);
    return ok ? 0 : LC_ENOMEM;
}

/* TLS 1.2: client key, server key, client IV, server IV (no MAC keys for an AEAD). */
static int take_tls12(worker_tls_record_t *rec, SSL *ssl, const char *digest)
{
    size_t iv_len = rec->aead == WORKER_TLS_CHACHA ? 12 : 4;
    uint8_t block[2 * 32 + 2 * 12];
    size_t len = 2 * (size_t)rec->key_len + 2 * iv_len;
    int rv = key_block(ssl, digest, block, len);
    if (rv == 0) {
        memcpy(rec->w.key, block, rec->key_len);
        memcpy(rec->r.key, block + rec->key_len, rec->key_len);
        memcpy(rec->w.iv, block + 2 * rec->key_len, iv_len);
        memcpy(rec->r.iv, block + 2 * rec->key_len + iv_len, iv_len);
    }
    OPENSSL_cleanse(block, sizeof block);
    return rv;
}

static int take_tls13(worker_tls_record_t *rec, const worker_tls_seen_t *seen, const char *digest)
{
    if (seen->secrets_seen != 3 || seen->secret_len == 0 || seen->key_updated)
        return LC_EINVAL;
    rec->digest = digest;
    rec->secret_len = seen->secret_len;
    memcpy(rec->w.secret, seen->client_secret, seen->secret_len);
    memcpy(rec->r.secret, seen->server_secret, seen->secret_len);
    if (keys_from_secret(rec, &rec->w) != 0 || keys_from_secret(rec, &rec->r) != 0)
        return LC_ENOMEM;
    return 0;
}

/* The suite's AEAD, or 0 when it is not one of ours. */
static uint8_t aead_of(const SSL_CIPHER *cipher, uint8_t *key_len)
{
    switch (cipher != NULL ? SSL_CIPHER_get_cipher_nid(cipher) : NID_undef) {
    case NID_aes_128_gcm:
        *key_len = 16;
        return WORKER_TLS_AES128GCM;
    case NID_aes_256_gcm:
        *key_len = 32;
        return WORKER_TLS_AES256GCM;
    case NID_chacha20_poly1305:
        *key_len = 32;
        return WORKER_TLS_CHACHA;
    default:
        return 0;
    }
}

int worker_tls_record_take(worker_tls_record_t *rec, SSL *ssl, const worker_tls_seen_t *seen)
{
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    const EVP_MD *md = cipher != NULL ? SSL_CIPHER_get_handshake_digest(cipher) : NULL;
    int version = SSL_version(ssl);
    memset(rec, 0, sizeof *rec);
    if ((rec->aead = aead_of(cipher, &rec->key_len)) == 0 || md == NULL ||
        (version != TLS1_2_VERSION && version != TLS1_3_VERSION))
        return LC_EINVAL;
    /* The names OpenSSL's own digests go by: static strings, valid for the process. */
    const char *digest = EVP_MD_get_size(md) == 48 ? "SHA384" : "SHA256";
    if (EVP_MD_get_size(md) != 48 && EVP_MD_get_size(md) != 32)
        return LC_EINVAL;
    rec->tls13 = version == TLS1_3_VERSION;
    int rv = rec->tls13 ? take_tls13(rec, seen, digest) : take_tls12(rec, ssl, digest);
    if (rv != 0) {
        OPENSSL_cleanse(rec, sizeof *rec);
        return rv;
    }
    if (rec->tls13) {
        rec->r.seq = seen->in.records - seen->in_at_ready;
        rec->w.seq = seen->out.records - seen->out_at_ready;
    } else {
        rec->r.seq = seen->in.since_ccs;
        rec->w.seq = seen->out.since_ccs;
    }
    return 0;
}
