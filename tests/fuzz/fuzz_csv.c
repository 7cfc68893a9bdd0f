/* fuzz_csv.c — lc_csv_parse on arbitrary text; properties: a refusal says why and leaves the
 * table empty; an accepted table has valid, unique names and at least one row of UTF-8 cells
 * without NUL; lc_table_from_rows builds the same table from its cells; and the table written
 * back as CSV (every field quoted) parses to the same table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_buf.h"
#include "lc_csv.h"
#include "lc_err.h"
#include "lc_utf8.h"

static bool is_name(const char *s)
{
    if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
        return false;
    for (s++; *s != '\0'; s++)
        if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static void check_table(const lc_table_t *t)
{
    FUZZ_CHECK(t->n_cols >= 1 && t->n_cols <= LC_CSV_MAX_COLS && t->n_rows >= 1 &&
                   t->n_rows <= LC_CSV_MAX_ROWS,
               "%zu columns, %zu rows", t->n_cols, t->n_rows);
    for (size_t c = 0; c < t->n_cols; c++) {
        FUZZ_CHECK(is_name(t->cols[c]), "column name \"%s\"", t->cols[c]);
        int found = lc_table_col(t, t->cols[c], strlen(t->cols[c]));
        FUZZ_CHECK(found == (int)c, "column \"%s\" found at %d, not %zu", t->cols[c], found, c);
    }
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++) {
            lc_value_t v = lc_table_cell(t, r, c);
            FUZZ_CHECK(v.type == LC_V_STRING && strlen(v.data) == v.len, "cell %zu,%zu", r, c);
            for (size_t at = 0, n; at < v.len; at += n)
                FUZZ_CHECK((n = lc_utf8_seq_len(v.data + at, v.len - at)) > 0,
                           "cell %zu,%zu: invalid UTF-8", r, c);
        }
}

static void check_same(const lc_table_t *a, const lc_table_t *b, const char *how)
{
    FUZZ_CHECK(a->n_cols == b->n_cols && a->n_rows == b->n_rows, "%s: %zux%zu, not %zux%zu", how,
               b->n_rows, b->n_cols, a->n_rows, a->n_cols);
    for (size_t c = 0; c < a->n_cols; c++)
        FUZZ_CHECK(strcmp(a->cols[c], b->cols[c]) == 0, "%s: column %zu", how, c);
    for (size_t r = 0; r < a->n_rows; r++)
        for (size_t c = 0; c < a->n_cols; c++) {
            lc_value_t x = lc_table_cell(a, r, c), y = lc_table_cell(b, r, c);
            FUZZ_CHECK(x.len == y.len && memcmp(x.data, y.data, x.len) == 0, "%s: cell %zu,%zu",
                       how, r, c);
        }
}

static void check_from_rows(const lc_table_t *t)
{
    const char **cells = malloc(t->n_rows * t->n_cols * sizeof *cells);
    if (cells == NULL)
        abort();
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        cells[i] = lc_table_cell(t, i / t->n_cols, i % t->n_cols).data;
    lc_table_t rebuilt;
    char err[256];
    int rv = lc_table_from_rows((const char *const *)t->cols, t->n_cols, cells, t->n_rows,
                                &rebuilt, err, sizeof err);
    FUZZ_CHECK(rv == 0, "from rows: %s", err);
    check_same(t, &rebuilt, "from rows");
    lc_table_free(&rebuilt);
    free(cells);
}

static void append_quoted(lc_buf_t *b, const char *s, size_t len, char end)
{
    if (lc_buf_append(b, "\"", 1) != 0)
        abort();
    for (size_t i = 0; i < len; i++)
        if (lc_buf_append(b, s[i] == '"' ? "\"\"" : s + i, s[i] == '"' ? 2 : 1) != 0)
            abort();
    if (lc_buf_append(b, "\"", 1) != 0 || lc_buf_append(b, &end, 1) != 0)
        abort();
}

static void check_written_back(const lc_table_t *t)
{
    lc_buf_t b = {0};
    for (size_t c = 0; c < t->n_cols; c++)
        append_quoted(&b, t->cols[c], strlen(t->cols[c]), c + 1 < t->n_cols ? ',' : '\n');
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++) {
            lc_value_t v = lc_table_cell(t, r, c);
            append_quoted(&b, v.data, v.len, c + 1 < t->n_cols ? ',' : '\n');
        }
    lc_table_t again;
    char err[256];
    int rv = lc_csv_parse(b.data, b.len, &again, err, sizeof err);
    if (b.len <= LC_CSV_MAX_BYTES) {
        FUZZ_CHECK(rv == 0, "written back: %s", err);
        check_same(t, &again, "written back");
    }
    lc_table_free(&again);
    lc_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lc_table_t t, zero = {0};
    char err[256] = "";
    int rv = lc_csv_parse((const char *)data, size, &t, err, sizeof err);
    FUZZ_CHECK(rv == 0 || rv == LC_EINVAL || rv == LC_ETOOBIG, "parse: %d", rv);
    if (rv != 0) {
        FUZZ_CHECK(err[0] != '\0' && memcmp(&t, &zero, sizeof t) == 0, "refused (%d): \"%s\"", rv,
                   err);
        return 0;
    }
    check_table(&t);
    check_from_rows(&t);
    check_written_back(&t);
    lc_table_free(&t);
    return 0;
}
