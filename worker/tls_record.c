/* tls_record.c — sealing and opening TLS records with the keys tls_keys.c took over
 * (RFC 8446 5.2–5.3 for TLS 1.3; RFC 5288 and RFC 7905 for TLS 1.2's AEAD suites). */
#include "tls_record.h"

#include <assert.h>
#include <string.h>

#include "lc_err.h"

#define TAG_LEN 16u

/* Tally */

void worker_tls_tally(worker_tls_tally_t *t, const void *bytes, size_t len)
{
    const uint8_t *p = bytes;
    while (len > 0) {
        if (t->body_left > 0) {
            size_t n = len < t->body_left ? len : t->body_left;
            p += n, len -= n;
            t->body_left -= (uint32_t)n;
            continue;
        }
        t->hdr[t->hdr_have++] = *p++;
        len--;
        if (t->hdr_have < WORKER_TLS_RECORD_HEADER)
            continue;
        t->hdr_have = 0;
        t->body_left = (uint32_t)t->hdr[3] << 8 | t->hdr[4];
        t->records++;
        t->since_ccs = t->hdr[0] == WORKER_TLS_CT_CCS ? 0 : t->since_ccs + 1;
    }
}

bool worker_tls_tally_whole(const worker_tls_tally_t *t)
{
    return t->hdr_have == 0 && t->body_left == 0;
}

/* AEAD */

static const char *const cipher_names[] = {
    [WORKER_TLS_AES128GCM] = "AES-128-GCM",
    [WORKER_TLS_AES256GCM] = "AES-256-GCM",
    [WORKER_TLS_CHACHA] = "ChaCha20-Poly1305",
};

/* The direction's context: made and keyed with key on first use. */
static EVP_CIPHER_CTX *keyed(EVP_CIPHER_CTX **ctx, uint8_t aead, const uint8_t *key, int enc)
{
    assert(aead >= WORKER_TLS_AES128GCM && aead <= WORKER_TLS_CHACHA);
    if (*ctx != NULL)
        return *ctx;
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, cipher_names[aead], NULL);
    EVP_CIPHER_CTX *c = cipher != NULL ? EVP_CIPHER_CTX_new() : NULL;
    if (c != NULL && EVP_CipherInit_ex2(c, cipher, key, NULL, enc, NULL) != 1) {
        EVP_CIPHER_CTX_free(c);
        c = NULL;
    }
    EVP_CIPHER_free(cipher); /* the context holds its own reference */
    return *ctx = c;
}

void worker_tls_keyed_drop(EVP_CIPHER_CTX **ctx)
{
    EVP_CIPHER_CTX_free(*ctx);
    *ctx = NULL;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The per-record nonce: the IV XORed with the sequence number (TLS 1.3, ChaCha20 in 1.2),
 * or TLS 1.2 GCM's salt and explicit part. */
static void nonce_of(const worker_tls_record_t *rec, const worker_tls_dir_t *d,
                     const uint8_t *explicit, uint8_t nonce[12])
{
    if (!rec->tls13 && rec->aead != WORKER_TLS_CHACHA) {
        memcpy(nonce, d->iv, 4);
        memcpy(nonce + 4, explicit, 8);
        return;
    }
    uint8_t seq[8];
    put_be64(seq, d->seq);
    memcpy(nonce, d->iv, 12);
    for (int i = 0; i < 8; i++)
        nonce[4 + i] ^= seq[i];
}

/* TLS 1.2's additional data: sequence number, type, version, plaintext length. */
static void aad12(const worker_tls_dir_t *d, uint8_t type, size_t plain_len, uint8_t aad[13])
{
    put_be64(aad, d->seq);
    aad[8] = type;
    aad[9] = 3, aad[10] = 3;
    aad[11] = (uint8_t)(plain_len >> 8), aad[12] = (uint8_t)plain_len;
}

/* One AEAD pass over in[0..len) into out with the keyed ctx; enc: seal (writes the tag),
 * else open (checks it). */
static bool crypt(EVP_CIPHER_CTX *ctx, int enc, const uint8_t nonce[12], const uint8_t *aad,
                  size_t aad_len, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag)
{
    int n = 0, fin = 0;
    if (EVP_CipherInit_ex2(ctx, NULL, NULL, nonce, enc, NULL) != 1 ||
        EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aad_len) != 1)
        return false;
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tag) != 1)
        return false;
    if (len > 0 && EVP_CipherUpdate(ctx, out, &n, in, (int)len) != 1)
        return false;
    if (EVP_CipherFinal_ex(ctx, out + n, &fin) != 1) /* open: the tag did not match */
        return false;
    return !enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag) == 1;
}

/* Seal */

size_t worker_tls_record_seal(worker_tls_record_t *rec, EVP_CIPHER_CTX **ctxp, uint8_t type,
                              const uint8_t *plain, size_t len, uint8_t *out)
{
    assert(len <= WORKER_TLS_RECORD_MAX_PLAIN);
    worker_tls_dir_t *d = &rec->w;
    EVP_CIPHER_CTX *ctx = keyed(ctxp, rec->aead, d->key, 1);
    if (ctx == NULL)
        return 0;
    bool explicit = !rec->tls13 && rec->aead != WORKER_TLS_CHACHA;
    size_t body = (explicit ? 8 : 0) + len + (rec->tls13 ? 1 : 0) + TAG_LEN;
    uint8_t *hdr = out, *payload = out + WORKER_TLS_RECORD_HEADER + (explicit ? 8 : 0);
    hdr[0] = rec->tls13 ? WORKER_TLS_CT_DATA : type;
    hdr[1] = 3, hdr[2] = 3;
    hdr[3] = (uint8_t)(body >> 8), hdr[4] = (uint8_t)body;
    uint8_t nonce[12], aad[13], seq[8];
    put_be64(seq, d->seq);
    if (explicit)
        memcpy(out + WORKER_TLS_RECORD_HEADER, seq, 8); /* the sequence: never used twice */
    nonce_of(rec, d, seq, nonce);
    bool ok;
    if (rec->tls13) {
        if (len > 0)
            memmove(payload, plain, len);
        payload[len] = type; /* the inner content type, no padding */
        ok = crypt(ctx, 1, nonce, hdr, WORKER_TLS_RECORD_HEADER, payload, len + 1, payload,
                   payload + len + 1);
    } else {
        aad12(d, type, len, aad);
        ok = crypt(ctx, 1, nonce, aad, sizeof aad, plain, len, payload, payload + len);
    }
    if (!ok)
        return 0;
    d->seq++;
    return WORKER_TLS_RECORD_HEADER + body;
}

/* Open */

/* TLS 1.3's inner plaintext: the content type is the last byte that is not padding. */
static int strip_inner(uint8_t *plain, size_t *len, uint8_t *type)
{
    size_t n = *len;
    while (n > 0 && plain[n - 1] == 0)
        n--;
    if (n == 0)
        return LC_EPROTO;
    *type = plain[n - 1];
    *len = n - 1;
    return *len <= WORKER_TLS_RECORD_MAX_PLAIN ? 0 : LC_EPROTO; /* record_overflow */
}

int worker_tls_record_open(worker_tls_record_t *rec, EVP_CIPHER_CTX **ctxp, const uint8_t *record,
                           size_t len, uint8_t *out, uint8_t *type, size_t *plain_len,
                           const char **why)
{
    assert(len >= WORKER_TLS_RECORD_HEADER);
    size_t body = (size_t)record[3] << 8 | record[4];
    assert(len == WORKER_TLS_RECORD_HEADER + body && body <= WORKER_TLS_RECORD_MAX_BODY);
    bool explicit = !rec->tls13 && rec->aead != WORKER_TLS_CHACHA;
    size_t over = (explicit ? 8 : 0) + TAG_LEN;
    *why = "a record too short for its cipher";
    if (body < over + (rec->tls13 ? 1 : 0) || record[1] != 3 || record[2] != 3)
        return LC_EPROTO;
    *why = "a record of an unknown content type";
    if (rec->tls13 ? record[0] != WORKER_TLS_CT_DATA
                   : record[0] < WORKER_TLS_CT_ALERT || record[0] > WORKER_TLS_CT_DATA)
        return LC_EPROTO;
    worker_tls_dir_t *d = &rec->r;
    EVP_CIPHER_CTX *ctx = keyed(ctxp, rec->aead, d->key, 0);
    *why = "the cipher failed (out of memory)";
    if (ctx == NULL)
        return LC_EPROTO;
    const uint8_t *payload = record + WORKER_TLS_RECORD_HEADER + (explicit ? 8 : 0);
    size_t n = body - over;
    uint8_t nonce[12], aad[13], tag[TAG_LEN];
    memcpy(tag, payload + n, TAG_LEN);
    nonce_of(rec, d, record + WORKER_TLS_RECORD_HEADER, nonce);
    bool ok;
    if (rec->tls13) {
        ok = crypt(ctx, 0, nonce, record, WORKER_TLS_RECORD_HEADER, payload, n, out, tag);
    } else {
        aad12(d, record[0], n, aad);
        ok = crypt(ctx, 0, nonce, aad, sizeof aad, payload, n, out, tag);
    }
    *why = "a record that fails authentication";
    if (!ok)
        return LC_EPROTO;
    d->seq++;
    *plain_len = n;
    *type = record[0];
    *why = "a record of padding only, or with more than 16 KiB of plaintext";
    return rec->tls13 ? strip_inner(out, plain_len, type) : 0;
}
