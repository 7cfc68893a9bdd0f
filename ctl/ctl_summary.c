/* ctl_summary.c — prints a scenario's validation summary: a few lines, an endpoint table, the memory estimate. */
#include "ctl_summary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "lc_text.h"

#define CELL_MAX 512   /* bytes of one field shown */
#define NAME_COLS_MAX 40
#define PATH_COLS_MAX 80

/* s's text safe for a terminal ("-" for none). OUT: buf. */
static const char *shown(const json_t *s, char *buf, size_t len)
{
    lc_text_clean(buf, len, json_is_string(s) ? json_string_value(s) : "-");
    return buf;
}

static bool is_lead(char c)
{
    return ((unsigned char)c & 0xc0) != 0x80;
}

/* Terminal columns of clean UTF-8 text: one per code point. */
static size_t columns_of(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += is_lead(*s);
    return n;
}

/* s (clean UTF-8) left-aligned in width (>= 1) columns, cut with "~" when longer. */
static void put_cell(FILE *out, const char *s, size_t width)
{
    size_t cols = columns_of(s), kept = 0;
    if (cols <= width) {
        fprintf(out, "%s%*s", s, (int)(width - cols), "");
        return;
    }
    const char *p = s;
    for (; !(is_lead(*p) && kept == width - 1); p++)
        kept += is_lead(*p);
    fprintf(out, "%.*s~", (int)(p - s), s);
}

static json_int_t int_of(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

/* "1h2m3.5s" for ms. */
static void format_duration(json_int_t ms, char *buf, size_t len)
{
    json_int_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, rest = ms % 1000;
    size_t n = 0;
    if (h > 0)
        n += (size_t)snprintf(buf + n, len - n, "%" JSON_INTEGER_FORMAT "h", h);
    if (m > 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%" JSON_INTEGER_FORMAT "m", m);
    if ((s > 0 || rest > 0 || n == 0) && n < len)
        snprintf(buf + n, len - n, rest ? "%" JSON_INTEGER_FORMAT ".%03" JSON_INTEGER_FORMAT "s"
                                        : "%" JSON_INTEGER_FORMAT "s", s, rest);
}

static void print_model(FILE *out, const json_t *sum)
{
    char took[64];
    format_duration(int_of(sum, "duration_ms"), took, sizeof took);
    const char *model = json_string_value(json_object_get(sum, "model"));
    json_int_t users = int_of(sum, "users"), stages = int_of(sum, "stages");
    if (model != NULL && strcmp(model, "open") == 0)
        fprintf(out, "  model       open: %g requests/s, at most %" JSON_INTEGER_FORMAT " users",
                json_number_value(json_object_get(sum, "arrival_rate")), users);
    else
        fprintf(out, "  model       closed: %" JSON_INTEGER_FORMAT " users", users);
    if (stages > 0)
        fprintf(out, ", %" JSON_INTEGER_FORMAT " stage%s", stages, stages == 1 ? "" : "s");
    fprintf(out, ", for %s\n", took);
}

static void print_endpoints(FILE *out, const json_t *list)
{
    char name[CELL_MAX], method[CELL_MAX], path[CELL_MAX];
    size_t i, name_w = 4, method_w = 6;
    const json_t *e;
    json_array_foreach(list, i, e) {
        size_t n = columns_of(shown(json_object_get(e, "name"), name, sizeof name));
        size_t m = columns_of(shown(json_object_get(e, "method"), method, sizeof method));
        name_w = n > name_w ? n : name_w;
        method_w = m > method_w ? m : method_w;
    }
    name_w = name_w > NAME_COLS_MAX ? NAME_COLS_MAX : name_w;
    fprintf(out, "  endpoints   %zu\n    ", json_array_size(list));
    put_cell(out, "NAME", name_w);
    fprintf(out, "  %-*s  WEIGHT  PATH\n", (int)method_w, "METHOD");
    json_array_foreach(list, i, e) {
        fputs("    ", out);
        put_cell(out, shown(json_object_get(e, "name"), name, sizeof name), name_w);
        fprintf(out, "  ");
        put_cell(out, shown(json_object_get(e, "method"), method, sizeof method), method_w);
        if (json_object_get(e, "weight") != NULL)
            fprintf(out, "  %6" JSON_INTEGER_FORMAT "  ", int_of(e, "weight"));
        else /* a journey's request: its weight is its journey's */
            fprintf(out, "  %6s  ", "-");
        shown(json_object_get(e, "path"), path, sizeof path);
        size_t path_w = columns_of(path);
        put_cell(out, path, path_w < PATH_COLS_MAX ? (path_w > 0 ? path_w : 1) : PATH_COLS_MAX);
        fputc('\n', out);
    }
}

static void print_thresholds(FILE *out, const json_t *list)
{
    char label[CELL_MAX];
    size_t i;
    const json_t *t;
    fprintf(out, "  thresholds  %zu\n", json_array_size(list));
    json_array_foreach(list, i, t)
        fprintf(out, "    %s\n", shown(t, label, sizeof label));
}

/* "512 KiB", "2.8 MiB", "1.4 GiB". */
static void format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    bytes /= 1024.0;
    while (bytes >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, len, bytes < 10 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void print_memory(FILE *out, const json_t *sum)
{
    json_int_t per_user = int_of(sum, "bytes_per_idle_user"), users = int_of(sum, "users");
    const json_t *parts = json_object_get(sum, "bytes_per_idle_user_parts");
    const char *key;
    const json_t *v;
    char all[32];
    fprintf(out, "  memory      ~%" JSON_INTEGER_FORMAT " bytes per idle user (", per_user);
    bool first = true;
    json_object_foreach((json_t *)parts, key, v) {
        char k[64];
        lc_text_clean(k, sizeof k, key);
        fprintf(out, "%s%s %" JSON_INTEGER_FORMAT, first ? "" : ", ", k, json_integer_value(v));
        first = false;
    }
    format_bytes((double)per_user * (double)users, all, sizeof all);
    fprintf(out, "),\n              ~%s for %" JSON_INTEGER_FORMAT " users (response bodies "
            "kept for checks and the kernel's socket buffers not counted)\n", all, users);
}

/* "    token  extract journeys[0].on_start[0].extract.token, set journeys[0].steps[1].set.token"
 * for each variable of variables_set_at (an older master's answer: none). */
static void print_set_at(FILE *out, const json_t *set_at)
{
    char name[CELL_MAX], by[CELL_MAX], path[CELL_MAX];
    const char *key;
    const json_t *places, *place;
    size_t width = 0, i;
    json_object_foreach((json_t *)set_at, key, places) {
        lc_text_clean(name, sizeof name, key);
        size_t w = columns_of(name);
        width = w > width ? w : width;
    }
    width = width > NAME_COLS_MAX ? NAME_COLS_MAX : width;
    json_object_foreach((json_t *)set_at, key, places) {
        fputs("    ", out);
        lc_text_clean(name, sizeof name, key);
        put_cell(out, name, width);
        json_array_foreach(places, i, place)
            fprintf(out, "%s%s %s", i ? ", " : "  ", shown(json_object_get(place, "by"), by, sizeof by),
                    shown(json_object_get(place, "path"), path, sizeof path));
        fputc('\n', out);
    }
}

static void print_variables(FILE *out, const json_t *sum)
{
    char a[CELL_MAX];
    size_t i;
    const json_t *v, *vars = json_object_get(sum, "variables");
    fprintf(out, "  variables   %zu", json_array_size(vars));
    json_array_foreach(vars, i, v)
        fprintf(out, "%s%s", i ? ", " : "  ", shown(v, a, sizeof a));
    fputc('\n', out);
    print_set_at(out, json_object_get(sum, "variables_set_at"));
}

/* v2: the journeys, the variables their steps set, the feeders. */
static void print_journeys(FILE *out, const json_t *sum)
{
    char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX], d[CELL_MAX];
    size_t i;
    const json_t *j, *journeys = json_object_get(sum, "journeys");
    if (!json_is_array(journeys))
        return;
    fprintf(out, "  journeys    %zu\n", json_array_size(journeys));
    json_array_foreach(journeys, i, j)
        fprintf(out, "    %s  weight %" JSON_INTEGER_FORMAT ", %" JSON_INTEGER_FORMAT
                " request steps, pacing %" JSON_INTEGER_FORMAT " ms\n",
                shown(json_object_get(j, "name"), a, sizeof a), int_of(j, "weight"),
                int_of(j, "requests"), int_of(j, "pacing_ms"));
    print_variables(out, sum);
    const json_t *feeders = json_object_get(sum, "feeders");
    fprintf(out, "  feeders     %zu\n", json_array_size(feeders));
    json_array_foreach(feeders, i, j) {
        fprintf(out, "    %s  %" JSON_INTEGER_FORMAT " rows, %s, %s, on_exhausted %s",
                shown(json_object_get(j, "name"), a, sizeof a), int_of(j, "rows"),
                shown(json_object_get(j, "mode"), b, sizeof b),
                shown(json_object_get(j, "order"), c, sizeof c),
                shown(json_object_get(j, "on_exhausted"), d, sizeof d));
        size_t k;
        const json_t *col, *secret = json_object_get(j, "secret");
        json_array_foreach(secret, k, col) /* traces show "***" for these columns' values */
            fprintf(out, "%s%s", k ? ", " : ", secret ", shown(col, a, sizeof a));
        fputc('\n', out);
    }
}

/* "  capacity    40 users (~1.2 MiB) of 2000 the fleet grants now (~61 MiB, 2 workers): fits" */
static void print_capacity(FILE *out, const json_t *cap)
{
    char asked[32], granted[32];
    if (!json_is_object(cap))
        return;
    json_int_t users = int_of(cap, "users_asked"), fleet = int_of(cap, "users");
    format_bytes((double)int_of(cap, "bytes_asked"), asked, sizeof asked);
    if (!json_is_true(json_object_get(cap, "known"))) {
        fprintf(out, "  capacity    %" JSON_INTEGER_FORMAT " users (~%s); the fleet's capacity "
                "is unknown here (a follower: the leader has the workers)\n", users, asked);
        return;
    }
    format_bytes((double)int_of(cap, "bytes"), granted, sizeof granted);
    fprintf(out, "  capacity    %" JSON_INTEGER_FORMAT " users (~%s) of %" JSON_INTEGER_FORMAT
            " the fleet grants now (~%s, %" JSON_INTEGER_FORMAT " worker%s): ", users, asked,
            fleet, granted, int_of(cap, "workers"), int_of(cap, "workers") == 1 ? "" : "s");
    if (json_is_true(json_object_get(cap, "fits")))
        fputs("fits\n", out);
    else
        fprintf(out, "does not fit (%" JSON_INTEGER_FORMAT " users short)\n", users - fleet);
}

int ctl_print_summary(FILE *out, const json_t *answer)
{
    const json_t *sum = json_object_get(answer, "summary");
    char name[CELL_MAX], tenant[CELL_MAX], target[CELL_MAX];
    if (!json_is_object(sum))
        return -1;
    fprintf(out, "scenario %s is valid\n", shown(json_object_get(sum, "name"), name, sizeof name));
    fprintf(out, "  tenant      %s\n", shown(json_object_get(sum, "tenant"), tenant, sizeof tenant));
    fprintf(out, "  target      %s\n", shown(json_object_get(sum, "target"), target, sizeof target));
    print_model(out, sum);
    print_journeys(out, sum);
    print_endpoints(out, json_object_get(sum, "endpoints"));
    print_thresholds(out, json_object_get(sum, "thresholds"));
    print_memory(out, sum);
    print_capacity(out, json_object_get(sum, "capacity"));
    return 0;
}
