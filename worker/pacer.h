/* pacer.h — any thread (pure): the scheduling math of the workload models, free of
 * I/O; where a stage ramp stands at a moment, and when the open model's next start is due.
 *
 * Times are milliseconds on the run's timeline (0 = the run's start). A ramp
 * goes linearly from 0 (k6's startVUs / startRate default) to each stage's
 * target over the stage's duration, then holds the last target forever. */
#ifndef WORKER_PACER_H
#define WORKER_PACER_H

#include <stddef.h>
#include <stdint.h>

#include "lc_scenario.h"

/* The ramp's value (users or requests/s, unscaled) at t_ms. */
double worker_stages_at(const lc_stage_t *stages, size_t n, double t_ms);

/* An engine's share of a ramp whose worker-wide value is x × share_total:
 * engine `index` of n gets floor(x × share + (index + 0.5) / n), so that n
 * equal shares add up to round(x × n × share) (Hermite's identity). */
uint32_t worker_stages_share(double x, double share, unsigned index, unsigned n);

/* Open-model start times. The rate is scale × shape(t), where shape is the
 * stage ramp in requests/s, or a constant 1/s when there are no stages. Start
 * number k (0, 1, …) is due when the count of arrivals A(t) reaches k + phase;
 * each due time comes from absolute arithmetic, so no drift accumulates. */
typedef struct worker_pacer_s {
    size_t n_seg;       /* stages; the tail after them holds tail_rate */
    double tail_rate;   /* shape after the last stage (requests/s) */
    double seg_t[LC_SCENARIO_MAX_STAGES + 1];  /* stage i spans [seg_t[i], seg_t[i+1]) */
    double seg_s[LC_SCENARIO_MAX_STAGES + 1];  /* shape integral S at seg_t[i] */
    double seg_r[LC_SCENARIO_MAX_STAGES + 1];  /* shape at seg_t[i]; the ramp ends at seg_r[i+1] */
    size_t cache;       /* segment of the last lookup */
    double scale;       /* A(t) = a_base + scale × (S(t) − s_base) */
    double a_base, s_base;
    double phase;       /* [0, 1): offsets this engine's starts from the other engines' */
    uint64_t next;      /* number of the next start */
} worker_pacer_t;

/* Starts a schedule at t0_ms (the first start is due at A⁻¹(phase) ≥ t0_ms).
 * stages may be NULL (n 0): then the rate is constantly scale per second. */
void worker_pacer_init(worker_pacer_t *p, const lc_stage_t *stages, size_t n, double scale,
                       double phase, double t0_ms);
/* From t_ms on, the rate is new_scale × shape; starts due before stay due. */
void worker_pacer_rescale(worker_pacer_t *p, double t_ms, double new_scale);
/* When the next start is due (ms); INFINITY when the rate stays 0. */
double worker_pacer_due(worker_pacer_t *p);
/* The next start was issued (or dropped). */
static inline void worker_pacer_advance(worker_pacer_t *p)
{
    p->next++;
}
/* How many starts, from the next one on, are due at or before t_ms. */
uint64_t worker_pacer_pending(worker_pacer_t *p, double t_ms);
/* Skips n starts (dropped in bulk). */
static inline void worker_pacer_skip(worker_pacer_t *p, uint64_t n)
{
    p->next += n;
}

#endif
