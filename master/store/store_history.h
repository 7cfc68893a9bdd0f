/* store_history.h — a run second by second and its per-endpoint percentile table: the queries behind /history and the reports. */
#ifndef MASTER_STORE_HISTORY_H
#define MASTER_STORE_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* Locust's reported percentiles (PERCENTILES_TO_REPORT) and their CSV labels
 * ("50%" … "100%"), in order: the keys of every "percentiles_ms" object. */
#define STORE_N_PERCENTILES 11
extern const double store_percentiles[STORE_N_PERCENTILES];
extern const char *const store_percentile_labels[STORE_N_PERCENTILES];
/* Where p50, p95 and p99 are in store_percentiles. */
enum { STORE_PCT_P50 = 0, STORE_PCT_P95 = 5, STORE_PCT_P99 = 7 };

typedef struct store_history_query_s {
    const char *endpoint; /* one endpoint's seconds, or NULL for all endpoints merged */
    int64_t since;        /* only seconds whose unix time t is > since (INT64_MIN: all) */
    bool full;            /* add "bytes", "percentiles_ms" and the running "total" */
    size_t limit;         /* at most this many entries (0: all); "more" says if cut */
} store_history_query_t;

/* The document's fields besides "seconds". */
typedef struct store_history_head_s {
    uint64_t run;
    const char *endpoint;  /* the query's; NULL: all endpoints */
    char method[32];       /* the endpoint's method ("" for all or unknown) */
    uint32_t resolution_s; /* seconds per entry: 1, or 10 / 60 once compacted */
    bool more;             /* the limit cut the list (known once the walk is over) */
} store_history_head_t;

/* One entry as numbers: store_history_entry_json makes the JSON of it. */
typedef struct store_history_entry_s {
    int64_t t, offset_s;
    uint64_t users, requests, failures, bytes;
    double rps, failures_per_s;
    bool has_latency;                      /* it had requests: pct_us is set */
    uint64_t pct_us[STORE_N_PERCENTILES];  /* at store_percentiles */
    /* q->full: the run up to and including this entry */
    uint64_t total_requests, total_failures, total_bytes;
    bool total_has_latency;                /* some request so far: the four below are set */
    uint64_t total_median_us, total_min_us, total_max_us;
    double total_avg_ms;
} store_history_entry_t;

/* {"run","endpoint","method","resolution_s","more","seconds":[{"t","offset_s","users","requests",
 * "failures","rps","failures_per_s","p50_ms","p95_ms","p99_ms"}]}: one entry
 * per second from the run's first second with stats (gaps filled with zero
 * requests), t in unix seconds (the run's start plus offset_s), users of
 * the whole run (also with an endpoint), latencies from that second's
 * merged histograms (null without requests). While the run is not over its
 * newest second is still filling and is left out (a second already served
 * can still grow when a worker replays late batches after a failover: exact
 * figures come once the run is over).
 * With q->full each entry also has "bytes", "percentiles_ms" {"50%": …} and
 * "total" (the run up to and including that second: "requests", "failures",
 * "median_ms", "avg_ms", "min_ms", "max_ms", "avg_content_size").
 * "method" is the endpoint's method ("" for all). A finished run's history
 * compacted by retention has one entry per resolution_s seconds (10 or 60),
 * each holding that span's sums (rps: per second over it). NULL when the run
 * does not exist. */
json_t *store_history_json(store_t *s, uint64_t run, const store_history_query_t *q);

/* Takes one entry of a history as it is made, with the document's other
 * fields in head; a non-zero return stops the walk. */
typedef int (*store_history_row_fn)(void *arg, const store_history_head_t *head,
                                    const store_history_entry_t *entry);
/* store_history_json's entries one at a time, so that a long history is
 * never whole in memory. OUT: *head (when not NULL), the head as the walk
 * ends ("more" included). Returns 0, LC_ENOTFOUND, LC_EIO, LC_ENOMEM, or
 * what row returned. */
int store_history_each(store_t *s, uint64_t run, const store_history_query_t *q,
                       store_history_row_fn row, void *arg, store_history_head_t *head);

/* One entry of store_history_json's "seconds" (full: with "bytes",
 * "percentiles_ms" and "total"); the head's fields without "seconds". */
json_t *store_history_entry_json(const store_history_entry_t *e, bool full);
json_t *store_history_head_json(const store_history_head_t *head);

/* The run's request table as Locust writes it: [{"type","name","requests",
 * "failures","median_ms","avg_ms","min_ms","max_ms","avg_content_size","rps",
 * "failures_per_s","percentiles_ms"}], endpoints by name, then the total row
 * (type "", name "Aggregated"). Latencies are null for a row without
 * requests. NULL when the run does not exist. */
json_t *store_report_stats_json(store_t *s, uint64_t run, uint64_t now_ms);

#endif
