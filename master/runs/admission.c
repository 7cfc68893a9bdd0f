/* admission.c — the pure checks of admission.h. */
#include "admission.h"

#include <assert.h>
#include <string.h>

#include "lc_protocol.h"
#include "store.h"

static const char *endpoints_problem(const lc_scenario_t *sc, const Lc__StatsBatch *b)
{
    for (size_t i = 0; i < b->n_endpoints; i++) {
        const Lc__EndpointStats *e = b->endpoints[i];
        const char *method;
        if (lc_scenario_series_find(sc, e->name, &method) < 0 || strcmp(method, e->method) != 0)
            return "endpoint or method not in the run's plan";
        if (e->count > INT64_MAX || e->bytes > INT64_MAX || e->failures > e->count)
            return "counts do not fit (failures above requests, or past 2^63)";
    }
    for (size_t i = 0; i < b->n_errors; i++) {
        const Lc__ErrorCount *e = b->errors[i];
        if (lc_scenario_series_find(sc, e->endpoint, NULL) < 0 ||
            !lc_protocol_error_kind_known(e->kind))
            return "error count for an endpoint or kind not in the plan";
        if (e->count > INT64_MAX)
            return "error count past 2^63";
    }
    return NULL;
}

const char *admission_batch_problem(const lc_scenario_t *sc, const Lc__StatsBatch *b,
                                    uint64_t elapsed_s)
{
    assert(sc != NULL && b != NULL);
    if (b->interval > elapsed_s + ADMISSION_SECOND_SLACK_S)
        return "batch second lies beyond the run's elapsed time";
    size_t series = lc_scenario_series_count(sc);
    if (b->n_endpoints > series || b->n_errors > series * LC_PROTOCOL_ERROR_KINDS)
        return "more endpoints or error counts than the plan has";
    if (b->dropped > INT64_MAX || b->lost_requests > INT64_MAX || b->lost_batches > INT64_MAX)
        return "counts past 2^63";
    return endpoints_problem(sc, b);
}

const char *admission_claim_problem(bool known, uint64_t known_gen, uint32_t requested,
                                    const Lc__RunLoad *claim)
{
    assert(claim != NULL);
    if (!known)
        return "this worker holds no share of the run";
    if (claim->generation > known_gen + ADMISSION_GENERATION_SLACK)
        return "claimed generation was never assigned";
    if (claim->users > requested)
        return "claimed users exceed the run's";
    return NULL;
}

const char *admission_feed_problem(const lc_scenario_t *sc, const Lc__FeedRequest *req)
{
    assert(sc != NULL && req != NULL);
    const lc_program_t *p = sc->program;
    if (p == NULL || req->feeder >= p->n_feeders)
        return "no such feeder in the run's plan";
    if (!lc_feeder_leased(&p->feeders[req->feeder]))
        return "the feeder's rows are not leased (its order is not sequential)";
    if (req->count == 0 || req->seq == 0)
        return "a lease asks for at least one row, with a seq above 0";
    return NULL;
}

uint32_t admission_lease_count(uint32_t asked, uint32_t users, uint32_t run_users,
                               uint64_t remaining)
{
    uint64_t cap = (uint64_t)users * ADMISSION_LEASE_PER_USER;
    if (cap < ADMISSION_LEASE_MIN)
        cap = ADMISSION_LEASE_MIN;
    if (cap > STORE_LEASE_ROWS_MAX)
        cap = STORE_LEASE_ROWS_MAX;
    if (remaining != UINT64_MAX && run_users > 0 && users < run_users) {
        uint64_t part = (remaining * users + run_users - 1) / run_users; /* rounded up */
        part = part > 0 ? part : 1;
        cap = part < cap ? part : cap;
    }
    return asked < cap ? asked : (uint32_t)cap;
}
