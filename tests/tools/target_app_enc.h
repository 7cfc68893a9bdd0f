/* target_app_enc.h — lc_target's compressed answers, for the worker's decoders:
 *   GET /gzip[?size=N][&force=1]   (also /deflate, /br)  a JSON body of at least N bytes
 *        (0 to 8388608, default 1024): {"coding":"gzip","encoded":true,"token":"tok-N",
 *        "pad":"item-0 item-1 …"}, sent with Content-Encoding: <coding> when the request's
 *        Accept-Encoding names the coding (or force=1), else as is with "encoded":false and
 *        "coding":"identity". deflate is the zlib format (RFC 1950). 400 for a bad size.
 *   GET /bomb[?coding=gzip|deflate|br][&mib=M]  a small encoded body that decodes to M MiB
 *        (1 to 256, default 64) of '0' bytes, sent encoded whatever the request accepts,
 *        as a hostile server would. Each loop thread keeps its last bomb, so a load test of
 *        /bomb measures the worker, not the encoder. */
#ifndef LC_TARGET_APP_ENC_H
#define LC_TARGET_APP_ENC_H

#include "target_app.h"

/* The handlers of /gzip, /deflate, /br (coding their path names) and /bomb; query is the
 * request's query string, req its captured headers. 0 or LC_ENOMEM. */
int app_enc_serve(const char *path, size_t path_len, app_span_t query, const app_req_t *req,
                  app_resp_t *out);
int app_enc_bomb(app_span_t query, app_resp_t *out);
/* Frees the bombs this thread keeps (a loop thread calls it as it ends). */
void app_enc_thread_free(void);

#endif
