/* fuzz_tls_server.c — the server side of lc_tls_channel (the master's worker
 * port before a worker has authenticated) fed arbitrary bytes, in chunks of
 * fuzzer-chosen sizes. The first byte picks the chunk sizes; the channel's
 * replies are dropped. Property: no plaintext arrives before the handshake
 * has ended with a verified peer. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_tls_cert.h"
#include "fuzz_util.h"
#include "lc_tls_channel.h"

typedef struct sink_s {
    lc_tls_channel_t *ch;
    size_t sent, received;
} sink_t;

static int on_send(void *arg, uint8_t *buf, size_t len)
{
    sink_t *s = arg;
    s->sent += len;
    free(buf);
    return 0;
}

static int on_receive(void *arg, const uint8_t *data, size_t len)
{
    sink_t *s = arg;
    FUZZ_CHECK(lc_tls_channel_established(s->ch), "plaintext before the handshake ended");
    s->received += len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static SSL_CTX *ctx;
    if (ctx == NULL && (ctx = fuzz_tls_context(true)) == NULL)
        abort();
    fuzz_in_t in = {data, size};
    uint8_t flags = fuzz_u8(&in);
    uint32_t rng = flags;
    sink_t s = {0};
    lc_tls_io_t io = {.arg = &s, .send = on_send, .receive = on_receive};
    if (lc_tls_channel_new(&s.ch, ctx, NULL, &io) != 0)
        abort();
    while (in.n > 0) {
        rng = rng * 1103515245u + 12345u;
        size_t max = (flags & 1) ? 1 + (rng >> 16) % 16 : 1 + (rng >> 16) % 4096;
        size_t len;
        const uint8_t *chunk = fuzz_bytes(&in, max, &len);
        if (lc_tls_channel_feed(s.ch, chunk, len) != 0) {
            FUZZ_CHECK(lc_tls_channel_error(s.ch)[0] != '\0', "a failed feed without a reason");
            break;
        }
    }
    lc_tls_channel_peer(s.ch);
    lc_tls_channel_free(s.ch);
    return 0;
}
