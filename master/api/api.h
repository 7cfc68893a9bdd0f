/* api.h — the master's HTTP API (JSON under /api/v1, /healthz, /metrics). */
#ifndef MASTER_API_H
#define MASTER_API_H

#include <stddef.h>

#include "master.h"

/* Starts the API server on cfg.api_host:api_port into m->api.
 * Returns 0 or LC_EIO with errmsg. */
int api_init(master_t *m, char *errmsg, size_t errlen);
/* Stops the API: the server, the reads off the loop (each waiting request
 * answered 503), the /metrics cache. */
void api_close(master_t *m);

#endif
