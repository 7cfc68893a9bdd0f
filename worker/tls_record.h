/* tls_record.h — engine thread: a connection's TLS records after the handshake without
 * OpenSSL's SSL object (~12 KiB a connection): the traffic keys taken from the finished
 * handshake (tls_keys.c), each record sealed and opened with the AEAD (TLS 1.2 and 1.3;
 * AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305), and TLS 1.3's key updates. What a
 * connection keeps is ~220 bytes. Other suites stay with OpenSSL. */
#ifndef WORKER_TLS_RECORD_H
#define WORKER_TLS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>

#define WORKER_TLS_RECORD_HEADER 5u
#define WORKER_TLS_RECORD_MAX_PLAIN 16384u
/* The longest body a peer may send: RFC 8446 5.2 (TLS 1.2's 2048 of expansion is more than
 * any AEAD suite takes, and those are the only ones here). */
#define WORKER_TLS_RECORD_MAX_BODY (16384u + 256u)
/* The most a sealed record adds to its plaintext: the header, TLS 1.2 GCM's explicit nonce
 * or TLS 1.3's content type, and the tag. */
#define WORKER_TLS_RECORD_OVERHEAD (5u + 8u + 16u)

enum {
    WORKER_TLS_CT_CCS = 20,
    WORKER_TLS_CT_ALERT = 21,
    WORKER_TLS_CT_HANDSHAKE = 22,
    WORKER_TLS_CT_DATA = 23,
};

/* A count of the records in one direction of a byte stream, fed as OpenSSL reads or
 * writes it (tls_bio.c): what tells the sequence numbers when the records leave OpenSSL. */
typedef struct worker_tls_tally_s {
    uint64_t records;   /* headers seen */
    uint64_t since_ccs; /* records after the last ChangeCipherSpec (TLS 1.2's sequence) */
    uint32_t body_left; /* bytes of the current record still to come */
    uint8_t hdr[WORKER_TLS_RECORD_HEADER];
    uint8_t hdr_have;
} worker_tls_tally_t;

void worker_tls_tally(worker_tls_tally_t *t, const void *bytes, size_t len);
/* Whether the stream ended on a record's end. */
bool worker_tls_tally_whole(const worker_tls_tally_t *t);

enum { WORKER_TLS_AES128GCM = 1, WORKER_TLS_AES256GCM, WORKER_TLS_CHACHA };

/* One direction's keys. */
typedef struct worker_tls_dir_s {
    uint64_t seq;
    uint8_t key[32];
    uint8_t iv[12];     /* TLS 1.2 GCM: the 4-byte salt */
    uint8_t secret[48]; /* TLS 1.3: the traffic secret the next key update derives from */
} worker_tls_dir_t;

typedef struct worker_tls_record_s {
    worker_tls_dir_t w, r; /* ours (the client's) and the server's */
    uint8_t aead;          /* WORKER_TLS_AES128GCM … */
    uint8_t key_len;
    uint8_t secret_len;    /* TLS 1.3: the hash's length; 0: TLS 1.2 */
    bool tls13;
    const char *digest;    /* TLS 1.3: the suite's hash, for key updates */
} worker_tls_record_t;

/* What a connection noted while OpenSSL ran it, to take its records over. */
typedef struct worker_tls_seen_s {
    worker_tls_tally_t in, out;
    uint64_t in_at_ready, out_at_ready; /* the tallies' records when the handshake finished */
    uint8_t client_secret[48], server_secret[48]; /* TLS 1.3's application traffic secrets */
    uint8_t secret_len;                           /* 0 until the keylog gave both */
    uint8_t secrets_seen;                         /* bit 0: client's, bit 1: server's */
    bool key_updated; /* OpenSSL read or sent a TLS 1.3 KeyUpdate: the secrets are stale */
} worker_tls_seen_t;

/* Notes a line of OpenSSL's keylog callback: TLS 1.3's first application traffic secrets. */
void worker_tls_seen_keylog(worker_tls_seen_t *seen, const char *line);
/* Notes a message of OpenSSL's message callback (SSL_set_msg_callback): a KeyUpdate, read or
 * sent, moves the traffic secrets past the keylog's, and the records can no longer be taken
 * over (the keylog does not give the updated secrets). */
void worker_tls_seen_msg(worker_tls_seen_t *seen, int content_type, const void *buf, size_t len);

/* Takes ssl's records over: the suite, version and keys of the finished handshake and the
 * sequence numbers from seen. Returns 0; LC_EINVAL when the suite or version is not one of
 * ours or the secrets are missing or stale (the connection stays with OpenSSL); LC_ENOMEM. */
int worker_tls_record_take(worker_tls_record_t *rec, SSL *ssl, const worker_tls_seen_t *seen);

/* TLS 1.3: the next keys of one direction from its secret (RFC 8446 7.2); the direction's
 * keyed context must be dropped. 0 or LC_ENOMEM. */
int worker_tls_record_update(const worker_tls_record_t *rec, worker_tls_dir_t *dir);

/* A direction's AEAD context, keyed with its key when first needed: a busy connection keys
 * it once (re-keying each record costs ~3 % of an HTTPS request's CPU), an idle one frees it
 * (worker_tls_keyed_drop) and keeps only the key. */
void worker_tls_keyed_drop(EVP_CIPHER_CTX **ctx);

/* Seals len (<= WORKER_TLS_RECORD_MAX_PLAIN) bytes of content `type` as one record into out
 * (room for len + WORKER_TLS_RECORD_OVERHEAD). Returns the record's length, or 0 when
 * OpenSSL failed. */
size_t worker_tls_record_seal(worker_tls_record_t *rec, EVP_CIPHER_CTX **ctx, uint8_t type,
                              const uint8_t *plain, size_t len, uint8_t *out);

/* Opens one whole record (header and body, body <= WORKER_TLS_RECORD_MAX_BODY) into out
 * (room for the body's length): its content type and plaintext's length. Returns 0, or
 * LC_EPROTO for a record that fails authentication or is malformed (what goes in errmsg). */
int worker_tls_record_open(worker_tls_record_t *rec, EVP_CIPHER_CTX **ctx, const uint8_t *record,
                           size_t len, uint8_t *out, uint8_t *type, size_t *plain_len,
                           const char **why);

#endif
