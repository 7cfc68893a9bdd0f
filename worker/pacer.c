/* pacer.c — stage ramps and open-model start times: pure arithmetic on the run's timeline. */
#include "pacer.h"

#include <math.h>

double worker_stages_at(const lc_stage_t *stages, size_t n, double t_ms)
{
    double start = 0, prev = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)stages[i].duration_ms, target = stages[i].target;
        if (t_ms < start + d)
            return t_ms <= start ? prev : prev + (target - prev) * (t_ms - start) / d;
        start += d;
        prev = target;
    }
    return prev;
}

uint32_t worker_stages_share(double x, double share, unsigned index, unsigned n)
{
    double v = floor(x * share + ((double)index + 0.5) / (double)(n ? n : 1));
    return v <= 0 ? 0 : v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The segment holding v in keys (seg_t or seg_s): keys[i] <= v < keys[i + 1],
 * or n_seg for the tail. Lookups mostly move forward, so start at the last one. */
static size_t seek(worker_pacer_t *p, const double *keys, double v)
{
    size_t i = p->cache < p->n_seg ? p->cache : p->n_seg;
    while (i > 0 && v < keys[i])
        i--;
    while (i < p->n_seg && v >= keys[i + 1])
        i++;
    p->cache = i;
    return i;
}

/* S(t): the shape's integral from 0 to t_ms, in requests. */
static double shape_integral(worker_pacer_t *p, double t_ms)
{
    size_t i = seek(p, p->seg_t, t_ms);
    double x = t_ms - p->seg_t[i];
    if (x < 0)
        x = 0;
    if (i == p->n_seg)
        return p->seg_s[i] + p->tail_rate * x / 1000.0;
    double d = p->seg_t[i + 1] - p->seg_t[i];
    double r0 = p->seg_r[i], r1 = p->seg_r[i + 1];
    return p->seg_s[i] + (r0 * x + (r1 - r0) * x * x / (2.0 * d)) / 1000.0;
}

/* S⁻¹(s): the first time the shape's integral reaches s; INFINITY if never. */
static double shape_inverse(worker_pacer_t *p, double s)
{
    size_t i = seek(p, p->seg_s, s);
    double rem = (s - p->seg_s[i]) * 1000.0; /* requests × ms/s: rate·ms still to cover */
    if (rem < 0)
        rem = 0;
    if (i == p->n_seg)
        return rem == 0 ? p->seg_t[i] : p->tail_rate > 0 ? p->seg_t[i] + rem / p->tail_rate
                                                         : INFINITY;
    double d = p->seg_t[i + 1] - p->seg_t[i];
    double b = p->seg_r[i], a = (p->seg_r[i + 1] - b) / (2.0 * d);
    /* a·x² + b·x = rem, solved in the form that stays exact as a → 0. */
    double disc = b * b + 4.0 * a * rem;
    double den = b + sqrt(disc > 0 ? disc : 0);
    double x = den > 0 ? 2.0 * rem / den : 0;
    return p->seg_t[i] + (x < d ? x : d);
}

void worker_pacer_init(worker_pacer_t *p, const lc_stage_t *stages, size_t n, double scale,
                       double phase, double t0_ms)
{
    double t = 0, s = 0, r = 0;
    if (n > LC_SCENARIO_MAX_STAGES)
        n = LC_SCENARIO_MAX_STAGES;
    for (size_t i = 0; i < n; i++) {
        double d = (double)stages[i].duration_ms, r1 = stages[i].target;
        p->seg_t[i] = t;
        p->seg_s[i] = s;
        p->seg_r[i] = r;
        s += (r + r1) / 2.0 * d / 1000.0;
        t += d;
        r = r1;
    }
    p->seg_t[n] = t;
    p->seg_s[n] = s;
    p->seg_r[n] = r;
    p->n_seg = n;
    p->tail_rate = n > 0 ? r : 1.0;
    p->cache = 0;
    p->scale = scale > 0 ? scale : 0;
    p->phase = phase;
    p->next = 0;
    p->a_base = 0;
    p->s_base = shape_integral(p, t0_ms);
}

void worker_pacer_rescale(worker_pacer_t *p, double t_ms, double new_scale)
{
    double s = shape_integral(p, t_ms);
    p->a_base += p->scale * (s - p->s_base);
    p->s_base = s;
    p->scale = new_scale > 0 ? new_scale : 0;
}

double worker_pacer_due(worker_pacer_t *p)
{
    if (p->scale <= 0)
        return INFINITY;
    double k = (double)p->next + p->phase - p->a_base;
    return shape_inverse(p, p->s_base + (k > 0 ? k : 0) / p->scale);
}

uint64_t worker_pacer_pending(worker_pacer_t *p, double t_ms)
{
    double c = p->a_base + p->scale * (shape_integral(p, t_ms) - p->s_base) - p->phase;
    if (c < (double)p->next)
        return 0;
    return (uint64_t)floor(c) - p->next + 1;
}
