/* tls_taken.c — a TLS connection whose records were taken over from OpenSSL (tls_record.h):
 * when and how they are taken, then each record sealed, opened and dispatched (data to HTTP,
 * alerts, TLS 1.3's tickets and key updates). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "lc_err.h"
#include "lc_log.h"
#include "tls_internal.h"

enum { HS_HELLO_REQUEST = 0, HS_NEW_SESSION_TICKET = 4, HS_KEY_UPDATE = 24 };

/* Taking over */

/* Whether OpenSSL holds nothing of the records now: no part of one read or written, nothing
 * waiting to be written, no close seen, and (TLS 1.3) the server's first records after the
 * handshake, its tickets, already read. */
static bool openssl_holds_nothing(const worker_conn_t *c, const tls_conn_t *t)
{
    if (!t->ready || t->failed || t->io.kept != NULL || t->io.writing || t->io.write_error ||
        t->out_off < t->out_len || SSL_has_pending(t->ssl) || SSL_get_shutdown(t->ssl) != 0)
        return false;
    const worker_tls_seen_t *seen = &t->keys.seen;
    if (!worker_tls_tally_whole(&seen->in) || !worker_tls_tally_whole(&seen->out))
        return false;
    if (SSL_version(t->ssl) == TLS1_3_VERSION && seen->in.records == seen->in_at_ready)
        return false;
    return c->rbuf_len >= WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY;
}

void worker_tls_take_over(worker_conn_t *c, tls_conn_t *t)
{
    if (t->taken || t->keep_openssl || !openssl_holds_nothing(c, t))
        return;
    worker_tls_record_t rec; /* keys.seen is read while rec is written */
    if (worker_tls_record_take(&rec, t->ssl, &t->keys.seen) != 0) {
        ERR_clear_error();
        t->keep_openssl = true; /* a suite of OpenSSL's only: not asked again */
        return;
    }
    t->io.seen = NULL;
    t->keys.rec = rec;
    OPENSSL_cleanse(&rec, sizeof rec);
    t->taken = true;
    /* OpenSSL marks the session of an SSL freed unshut as not resumable; this one is fine. */
    SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(t->ssl); /* and its BIO; the socket stays */
    t->ssl = NULL;
}

/* Sealing */

static int send_record(tls_conn_t *t, uint8_t type, const void *plain, size_t len)
{
    worker_tls_slot_t *slot = t->slot;
    if (slot->seal_buf == NULL &&
        (slot->seal_buf = malloc(WORKER_TLS_RECORD_MAX_PLAIN + WORKER_TLS_RECORD_OVERHEAD)) == NULL)
        return WORKER_ERR_ABORTED;
    size_t n = worker_tls_record_seal(&t->keys.rec, &t->wctx, type, plain, len, slot->seal_buf);
    if (n == 0) {
        ERR_clear_error();
        return WORKER_ERR_TLS;
    }
    return worker_tls_io_send(&t->io, slot->seal_buf, n) != 0 ? WORKER_ERR_RESET : 0;
}

int worker_tls_taken_write(worker_conn_t *c, tls_conn_t *t)
{
    int kind = 0;
    while (kind == 0 && t->out_off < t->out_len && !t->io.writing && !t->key_update_owed) {
        size_t n = t->out_len - t->out_off;
        n = n < WORKER_TLS_RECORD_MAX_PLAIN ? n : WORKER_TLS_RECORD_MAX_PLAIN;
        kind = send_record(t, WORKER_TLS_CT_DATA, t->out + t->out_off, n);
        if (kind == 0)
            t->out_off += n;
    }
    c->write_pending = t->io.writing || t->out_off < t->out_len;
    return kind;
}

/* Our KeyUpdate (update_not_requested) under the old keys, then the new ones; after the write
 * in flight when there is one. */
static int send_key_update(tls_conn_t *t)
{
    static const uint8_t msg[] = {HS_KEY_UPDATE, 0, 0, 1, 0};
    if (t->io.writing) {
        t->key_update_owed = true;
        return 0;
    }
    t->key_update_owed = false;
    int kind = send_record(t, WORKER_TLS_CT_HANDSHAKE, msg, sizeof msg);
    worker_tls_keyed_drop(&t->wctx);
    if (kind == 0 && worker_tls_record_update(&t->keys.rec, &t->keys.rec.w) != 0)
        kind = WORKER_ERR_ABORTED;
    return kind;
}

int worker_tls_taken_drained(worker_conn_t *c, tls_conn_t *t)
{
    (void)c;
    return t->key_update_owed ? send_key_update(t) : 0;
}

void worker_tls_taken_close(worker_conn_t *c, tls_conn_t *t)
{
    static const uint8_t close_notify[] = {1, 0};
    (void)c;
    assert(t->io.last_words && !t->io.writing);
    if (t->io.write_error == 0 && !t->key_update_owed)
        (void)send_record(t, WORKER_TLS_CT_ALERT, close_notify, sizeof close_notify);
}

/* Opening */

/* An alert: close_notify ends the server's side (the TCP close follows); user_canceled, and
 * in TLS 1.2 any warning, is let pass; anything else fails the connection (RFC 8446 6). */
static int on_alert(tls_conn_t *t, const uint8_t *p, size_t n)
{
    enum { WARNING = 1, CLOSE_NOTIFY = 0, USER_CANCELED = 90 };
    if (n != 2)
        return WORKER_ERR_TLS;
    if (p[1] == CLOSE_NOTIFY) {
        t->peer_closed = true;
        return 0;
    }
    if (p[1] == USER_CANCELED || (p[0] == WARNING && !t->keys.rec.tls13))
        return 0;
    return WORKER_ERR_TLS;
}

/* One whole post-handshake message header (hs_hdr) and what of its body this record holds:
 * a key update changes the server's keys and, when asked, ours; a ticket is skipped (the
 * engine resumes with the session it has); TLS 1.2's HelloRequest is declined by ignoring
 * it (RFC 5246 7.4.1.1). Returns 0 or an error kind; *used: the body bytes it took. */
static int on_message(tls_conn_t *t, const uint8_t *p, size_t n, size_t *used)
{
    const uint8_t *h = t->hs_hdr;
    size_t len = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    *used = 0;
    if (!t->keys.rec.tls13)
        return h[0] == HS_HELLO_REQUEST && len == 0 ? 0 : WORKER_ERR_TLS;
    if (h[0] == HS_KEY_UPDATE) {
        /* Its body ends the record: what follows is under the new keys. */
        if (len != 1 || n != 1 || p[0] > 1)
            return WORKER_ERR_TLS;
        *used = 1;
        worker_tls_keyed_drop(&t->rctx);
        if (worker_tls_record_update(&t->keys.rec, &t->keys.rec.r) != 0)
            return WORKER_ERR_ABORTED;
        return p[0] == 1 ? send_key_update(t) : 0;
    }
    if (h[0] != HS_NEW_SESSION_TICKET)
        return WORKER_ERR_TLS;
    t->skip = (uint32_t)len; /* the ticket's body, in this record and the next ones */
    return 0;
}

/* A handshake record's bytes: messages whose headers and bodies may be cut across records
 * (RFC 8446 5.1), in the order they come. */
static int on_handshake(tls_conn_t *t, const uint8_t *p, size_t n)
{
    while (n > 0) {
        if (t->skip > 0) {
            size_t k = t->skip < n ? t->skip : n;
            t->skip -= (uint32_t)k;
            p += k, n -= k;
            continue;
        }
        while (t->hs_have < sizeof t->hs_hdr && n > 0)
            t->hs_hdr[t->hs_have++] = *p++, n--;
        if (t->hs_have < sizeof t->hs_hdr)
            return 0; /* the header goes on in the next record */
        t->hs_have = 0;
        size_t used;
        int kind = on_message(t, p, n, &used);
        if (kind != 0)
            return kind;
        p += used, n -= used;
    }
    return 0;
}

/* Opens one whole record into the plaintext half of the engine's read buffer. */
static int on_record(worker_conn_t *c, tls_conn_t *t, const uint8_t *record, size_t len)
{
    uint8_t *plain = (uint8_t *)c->rbuf + c->rbuf_len, type = 0;
    size_t n = 0;
    const char *why = NULL;
    if (worker_tls_record_open(&t->keys.rec, &t->rctx, record, len, plain, &type, &n, &why)) {
        ERR_clear_error();
        /* Counted as kind tls by the owner; why, at debug level (a peer can send many). */
        lc_debug("tls", "msg=\"record refused\" why=\"%s\"", why);
        return WORKER_ERR_TLS;
    }
    if ((t->skip > 0 || t->hs_have > 0) && type != WORKER_TLS_CT_HANDSHAKE)
        return WORKER_ERR_TLS; /* a handshake message cut short */
    switch (type) {
    case WORKER_TLS_CT_DATA:
        /* An empty record (allowed: a padding of traffic) is no data: fed, it would close an
         * idle connection as bytes nobody asked for. */
        if (n > 0)
            worker_conn_feed(c, (const char *)plain, n);
        return 0;
    case WORKER_TLS_CT_ALERT:
        return on_alert(t, plain, n);
    case WORKER_TLS_CT_HANDSHAKE:
        return on_handshake(t, plain, n);
    default:
        return WORKER_ERR_TLS;
    }
}

static size_t body_of(const uint8_t *hdr)
{
    return (size_t)hdr[3] << 8 | hdr[4];
}

/* Completes the record the last read left in io.kept from the head of *p (io.kept holds the
 * header, or once the header is whole the record, at most). Returns 1 when it is whole, 0
 * when more must come, -1 when its length is out of bounds, -2 when out of memory. */
static int fill_kept(tls_conn_t *t, const uint8_t **p, size_t *left)
{
    worker_tls_io_t *io = &t->io;
    for (;;) {
        size_t want = io->kept_len < WORKER_TLS_RECORD_HEADER
                          ? WORKER_TLS_RECORD_HEADER
                          : WORKER_TLS_RECORD_HEADER + body_of((uint8_t *)io->kept);
        if (want > WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY)
            return -1;
        if (io->kept_len == want) /* want covers the header at least */
            return 1;
        if (io->kept_len == WORKER_TLS_RECORD_HEADER) { /* room for the body now */
            char *more = realloc(io->kept, want);
            if (more == NULL)
                return -2;
            io->kept = more;
        }
        size_t n = want - io->kept_len < *left ? want - io->kept_len : *left;
        memcpy(io->kept + io->kept_len, *p, n);
        io->kept_len += n, *p += n, *left -= n;
        if (io->kept_len < want)
            return 0;
    }
}

static void drop_kept(worker_tls_io_t *io)
{
    free(io->kept);
    io->kept = NULL;
    io->kept_len = 0;
}

/* Keeps the start of a record the read cut: room for its header, or for the whole record
 * once its header is known. */
static int keep_part(tls_conn_t *t, const uint8_t *p, size_t left)
{
    size_t room = left < WORKER_TLS_RECORD_HEADER ? WORKER_TLS_RECORD_HEADER
                                                  : WORKER_TLS_RECORD_HEADER + body_of(p);
    assert(t->io.kept == NULL && left < room &&
           room <= WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY);
    if ((t->io.kept = malloc(room)) == NULL)
        return WORKER_ERR_ABORTED;
    memcpy(t->io.kept, p, left);
    t->io.kept_len = left;
    return 0;
}

int worker_tls_taken_read(worker_conn_t *c, tls_conn_t *t, const char *buf, size_t len)
{
    const uint8_t *p = (const uint8_t *)buf;
    size_t left = len;
    int kind = 0;
    if (t->io.kept != NULL) {
        int whole = fill_kept(t, &p, &left);
        if (whole <= 0)
            return whole == 0 ? 0 : whole == -1 ? WORKER_ERR_TLS : WORKER_ERR_ABORTED;
        kind = on_record(c, t, (const uint8_t *)t->io.kept, t->io.kept_len);
        drop_kept(&t->io);
    }
    while (kind == 0 && left >= WORKER_TLS_RECORD_HEADER && !t->peer_closed &&
           worker_conn_connected(c)) {
        size_t whole = WORKER_TLS_RECORD_HEADER + body_of(p);
        if (whole > WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY)
            return WORKER_ERR_TLS;
        if (left < whole)
            break;
        kind = on_record(c, t, p, whole);
        p += whole, left -= whole;
    }
    /* The loop stopped at a record the read cut, unless the connection is done. */
    if (kind == 0 && left > 0 && !t->peer_closed && worker_conn_connected(c))
        kind = keep_part(t, p, left);
    return kind;
}
