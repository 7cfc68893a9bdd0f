/* metrics.h — the Prometheus text exposition of the master's state. */
#ifndef MASTER_METRICS_H
#define MASTER_METRICS_H

#include "master.h"

/* Renders /metrics; malloc'd text, NULL when out of memory. */
char *metrics_render(master_t *m);

#endif
