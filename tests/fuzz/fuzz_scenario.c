/* fuzz_scenario.c — lc_scenario_parse of arbitrary JSON, then the worker's
 * plan (worker/plan.c, worker/template.c) and a rendering of every task.
 * Property: the bytes before the body are exactly the request line and the
 * header lines plan.c writes, each ending in CRLF, with no other CR or LF:
 * nothing from the scenario may add a header or end the head early. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_util.h"
#include "lc_buf.h"
#include "lc_scenario.h"
#include "plan.h"
#include "template.h"

static bool sets_header(const lc_task_t *t, const char *name)
{
    for (size_t i = 0; i < t->n_headers; i++)
        if (strcasecmp(t->headers[i].name, name) == 0)
            return true;
    return false;
}

/* Checks one rendered request against the lines plan.c writes for t. */
static void check_request(const lc_task_t *t, const char *req, size_t len)
{
    size_t lines = 1 + !sets_header(t, "Host") + !sets_header(t, "User-Agent") + t->n_headers +
                   (t->body != NULL) + 1; /* + the blank line */
    size_t seen = 0, i = 0, last_line = 0, prev_line = 0, prev2_line = 0;
    for (; i < len && seen < lines; i++) {
        if (req[i] != '\r' && req[i] != '\n')
            continue;
        FUZZ_CHECK(req[i] == '\r' && i + 1 < len && req[i + 1] == '\n',
                   "task \"%s\": a raw %s at byte %zu of the head (line %zu of %zu)", t->name,
                   req[i] == '\r' ? "CR" : "LF", i, seen + 1, lines);
        prev2_line = prev_line;
        prev_line = last_line;
        last_line = i + 2;
        i++;
        seen++;
    }
    FUZZ_CHECK(seen == lines, "task \"%s\": %zu of %zu header lines", t->name, seen, lines);
    FUZZ_CHECK(last_line - prev_line == 2, "task \"%s\": the head does not end in a blank line",
               t->name);
    size_t body = len - last_line;
    if (t->body == NULL) {
        FUZZ_CHECK(body == 0, "task \"%s\": %zu bytes after the head of a request without body",
                   t->name, body);
    } else {
        /* The line before the blank one is "Content-Length: N". */
        size_t cl_start = prev2_line;
        static const char cl[] = "Content-Length: ";
        FUZZ_CHECK(strncmp(req + cl_start, cl, sizeof cl - 1) == 0,
                   "task \"%s\": no Content-Length before the body", t->name);
        unsigned long long n = strtoull(req + cl_start + sizeof cl - 1, NULL, 10);
        FUZZ_CHECK(n == body, "task \"%s\": Content-Length %llu, body %zu bytes", t->name, n, body);
    }
}

static void render_all(const worker_plan_t *p, uint64_t user, uint64_t iteration)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    worker_tpl_vars_t vars = {.user_id = user, .iteration = iteration, .rng = &rng};
    lc_buf_t scratch = {0}, out = {0};
    for (size_t i = 0; i < p->n_tasks; i++) {
        const char *req = NULL;
        size_t len = 0;
        if (worker_plan_render(p, i, &vars, &scratch, &out, &req, &len) == 0)
            check_request(p->tasks[i].task, req, len);
    }
    worker_plan_pick(p, &rng);
    lc_buf_free(&scratch);
    lc_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_log();
    lc_scenario_t sc;
    char err[512];
    if (lc_scenario_parse((const char *)data, size, &sc, err, sizeof err) != 0) {
        FUZZ_CHECK(err[0] != '\0', "rejected without a message");
        return 0;
    }
    /* A CA file is read by OpenSSL from the fuzzer's path: /dev/zero would
     * never end. The file's contents are not what is fuzzed here. */
    free(sc.tls.ca_file);
    sc.tls.ca_file = NULL;
    /* LC_FUZZ_IGNORE=base-path-crlf: the target URL's known finding. */
    if (fuzz_ignored("base-path-crlf") && strpbrk(sc.url.base_path, "\r\n") != NULL) {
        lc_scenario_free(&sc);
        return 0;
    }
    worker_plan_t *p = NULL;
    if (worker_plan_build(&p, &sc, err, sizeof err) == 0) {
        render_all(p, 1, 0);
        render_all(p, UINT64_MAX, UINT64_MAX);
        worker_plan_free(p);
    } else {
        lc_scenario_free(&sc);
    }
    return 0;
}
