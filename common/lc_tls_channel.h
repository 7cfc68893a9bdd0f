/* lc_tls_channel.h — mutual TLS on the worker port (:5557): contexts built
 * from --tls-cert/--tls-key/--tls-ca, and a channel running OpenSSL over
 * memory BIOs so that its owner keeps reading and writing its own uv stream. */
#ifndef LC_TLS_CHANNEL_H
#define LC_TLS_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

/* The three files of --tls-cert, --tls-key and --tls-ca; all NULL: no TLS. */
typedef struct lc_tls_files_s {
    const char *cert; /* PEM chain presented to the peer */
    const char *key;  /* its private key */
    const char *ca;   /* PEM CAs the peer's certificate must chain to */
} lc_tls_files_t;

/* Checks the three flags are given together. Returns 0 when all are set,
 * LC_ENOTFOUND when none is, LC_EINVAL with errmsg otherwise. */
int lc_tls_files_check(const lc_tls_files_t *files, char *errmsg, size_t errlen);

/* The reason of the thread's last OpenSSL error ("no certificate or crl
 * found"), or fallback when none is queued, in buf; returns buf. Clears the
 * thread's error queue, which the next SSL call must find empty. */
const char *lc_tls_error_reason(char *buf, size_t len, const char *fallback);

/* Builds the master's (server) or the worker's (client) context: TLS 1.2 or
 * later, our certificate and key, and verification of the peer against the
 * CA, which both sides require. Returns 0, or LC_EINVAL with errmsg naming
 * the file OpenSSL could not use. */
int lc_tls_context_new(SSL_CTX **out, bool server, const lc_tls_files_t *files, char *errmsg,
                       size_t errlen);

/* What a channel asks of its owner. */
typedef struct lc_tls_io_s {
    void *arg;
    /* Ciphertext for the socket; the callee owns buf (free()) even when it
     * fails. Returns 0 or an LC_ error (the channel then stops). */
    int (*send)(void *arg, uint8_t *buf, size_t len);
    /* Plaintext from the peer. Returns 0 to go on; anything else stops the
     * feed and is returned by lc_tls_channel_feed. */
    int (*receive)(void *arg, const uint8_t *data, size_t len);
} lc_tls_io_t;

typedef struct lc_tls_channel_s lc_tls_channel_t;

/* A channel for one connection. A client passes the host it dialed (a name
 * or an IP literal), which the peer's certificate must name; a server passes
 * NULL. A client's first bytes go out at once through io->send. Returns 0,
 * LC_ENOMEM, or LC_EIO when io->send failed. */
int lc_tls_channel_new(lc_tls_channel_t **out, SSL_CTX *ctx, const char *peer_host,
                       const lc_tls_io_t *io);
void lc_tls_channel_free(lc_tls_channel_t *ch);

/* Ciphertext read from the socket: plaintext goes to io->receive and any
 * reply (handshake, alerts) to io->send. Returns 0, what receive returned,
 * LC_EPROTO when the peer broke TLS or failed verification, LC_EIO when
 * io->send failed, or LC_ENOMEM (then lc_tls_channel_error says why and the
 * connection must be closed). */
int lc_tls_channel_feed(lc_tls_channel_t *ch, const uint8_t *data, size_t len);
/* Encrypts plaintext for the peer; before the handshake ends it is queued and
 * sent right after. Returns 0, LC_ENOMEM, LC_EPROTO, or LC_EIO when io->send
 * failed. */
int lc_tls_channel_write(lc_tls_channel_t *ch, const uint8_t *data, size_t len);
/* The handshake ended and the peer's certificate was verified. */
bool lc_tls_channel_established(const lc_tls_channel_t *ch);
/* Why the channel failed ("" while it has not). */
const char *lc_tls_channel_error(const lc_tls_channel_t *ch);
/* Redirects the channel's callbacks, for a connection handed to a new owner. */
void lc_tls_channel_set_io(lc_tls_channel_t *ch, const lc_tls_io_t *io);
/* The subject of the peer's verified certificate ("" before the handshake). */
const char *lc_tls_channel_peer(const lc_tls_channel_t *ch);
/* Whether the peer's verified certificate names name (a DNS subjectAltName,
 * or the CN when it has none; for an IP literal, an IP subjectAltName):
 * false before the handshake. */
bool lc_tls_channel_peer_is(const lc_tls_channel_t *ch, const char *name);

#endif
