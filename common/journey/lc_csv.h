/* lc_csv.h — a feeder's table: parsed from RFC 4180 CSV, or built from rows already parsed. */
#ifndef LC_CSV_H
#define LC_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "lc_value.h"

/* Limits of one table; past one a parse returns LC_ETOOBIG. */
#define LC_CSV_MAX_BYTES (1024 * 1024) /* the CSV text; from rows: names and cells together */
#define LC_CSV_MAX_COLS 256
#define LC_CSV_MAX_ROWS 1000000

/* A zeroed table is empty; lc_table_free() frees any table, parsed or not. */
typedef struct lc_table_s {
    /* read-only */
    size_t n_cols, n_rows;
    char **cols; /* the n_cols column names, NUL-terminated, unique, [A-Za-z_][A-Za-z0-9_]* */
    /* private */
    char *text;        /* the names, then the cells row by row, each followed by a NUL */
    uint32_t *offsets; /* where each name and cell starts in text, one more for text's end */
} lc_table_t;

/* Parses text[0..len) into *out: a header row of column names, then at least one row, each with
 * exactly as many fields; fields are unquoted (no '"' inside) or quoted ('""' for a quote, and
 * commas, CR and LF kept as they are); lines end in CRLF or LF, the last one may not; blank lines
 * at the end are ignored, blank lines before a row are errors; a UTF-8 byte order mark at the
 * start is skipped. NUL bytes and invalid UTF-8 are errors. Returns 0, or LC_EINVAL or LC_ETOOBIG
 * with "line L, column C: what" in errmsg (columns count characters) and *out empty;
 * LC_ENOMEM. */
int lc_csv_parse(const char *text, size_t len, lc_table_t *out, char *errmsg, size_t errlen);

/* Builds *out from n_cols names and n_rows * n_cols cells in row-major order (NUL-terminated
 * UTF-8; a NULL cell is a row missing that column), as lc_csv_parse would have, with the same
 * rules and limits. Returns 0, or LC_EINVAL or LC_ETOOBIG with errmsg ("rows[2]: no
 * \"password\"") and *out empty, or LC_ENOMEM. */
int lc_table_from_rows(const char *const *cols, size_t n_cols, const char *const *cells,
                       size_t n_rows, lc_table_t *out, char *errmsg, size_t errlen);

/* The cell at row, col (both in range): LC_V_STRING, NUL-terminated, pointing into the table. */
lc_value_t lc_table_cell(const lc_table_t *t, size_t row, size_t col);

/* The index of the column named name[0..len), or -1. */
int lc_table_col(const lc_table_t *t, const char *name, size_t len);

/* Frees the table's memory; *t is empty again. */
void lc_table_free(lc_table_t *t);

#endif
