/* lc_csv.c — RFC 4180 feeder tables: one pass over the text into one block of cells. */
#include "lc_csv.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_utf8.h"

#define NAME_QUOTE_MAX 40 /* bytes of a bad column name an error message quotes */

/* The parse of one CSV text. The text's cells, each followed by a NUL, never outgrow the
 * text plus one byte (quotes and separators go, NULs come in their place), and there is at
 * most one cell more than ',' and '\n' bytes: both arrays are allocated once, up front. */
typedef struct reader_s {
    const char *s;
    size_t len, pos;
    size_t line, col; /* of s[pos], from 1; col counts characters */
    char *text;
    size_t text_len;
    uint32_t *offsets; /* where each cell starts in text */
    size_t n_cells, cap_cells;
    char *errmsg;
    size_t errlen;
} reader_t;

/* Writes "line L, column C: what" (", column C" only when col > 0) and returns code. */
static int fail_at(reader_t *r, int code, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail_at(reader_t *r, int code, size_t line, size_t col, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (col > 0)
        return lc_errf(r->errmsg, r->errlen, code, "line %zu, column %zu: %s", line, col, what);
    return lc_errf(r->errmsg, r->errlen, code, "line %zu: %s", line, what);
}

/* How many bytes of name[0..len) a message quotes: at most NAME_QUOTE_MAX, whole characters. */
static int quote_len(const char *name, size_t len)
{
    size_t n = len < NAME_QUOTE_MAX ? len : NAME_QUOTE_MAX;
    while (n < len && n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
        n--;
    return (int)n;
}

/* What is wrong with a column name, or NULL: it becomes ${feeder.column}. */
static const char *name_problem(const char *name, size_t len)
{
    if (len == 0)
        return "is empty";
    char c = name[0];
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
        return "must start with a letter or '_'";
    for (size_t i = 1; i < len; i++) {
        c = name[i];
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9')))
            return "may hold only letters, digits and '_'";
    }
    return NULL;
}

/* Reading ------------------------------------------------------------------ */

static int peek(const reader_t *r, size_t ahead)
{
    return r->pos + ahead < r->len ? (unsigned char)r->s[r->pos + ahead] : -1;
}

/* Whether s[pos] ends a field: ',', LF, CRLF or the end of the text. */
static bool at_field_end(const reader_t *r)
{
    int c = peek(r, 0);
    return c < 0 || c == ',' || c == '\n' || (c == '\r' && peek(r, 1) == '\n');
}

/* Consumes the end at_field_end() found; returns ',', '\n', or 0 at the end of the text. */
static int take_field_end(reader_t *r)
{
    assert(at_field_end(r));
    int c = peek(r, 0);
    if (c < 0)
        return 0;
    if (c == ',') {
        r->pos++;
        r->col++;
        return ',';
    }
    r->pos += c == '\r' ? 2 : 1;
    r->line++;
    r->col = 1;
    return '\n';
}

/* Copies the character at s[pos] (1 to 4 bytes) into the cell; a line feed starts a line. */
static int take_char(reader_t *r)
{
    int c = peek(r, 0);
    size_t n = 1;
    if (c == 0)
        return fail_at(r, LC_EINVAL, r->line, r->col, "NUL byte");
    if (c >= 0x80 && (n = lc_utf8_seq_len(r->s + r->pos, r->len - r->pos)) == 0)
        return fail_at(r, LC_EINVAL, r->line, r->col, "invalid UTF-8");
    memcpy(r->text + r->text_len, r->s + r->pos, n);
    r->text_len += n;
    r->pos += n;
    r->col++;
    if (c == '\n') {
        r->line++;
        r->col = 1;
    }
    return 0;
}

static int read_unquoted(reader_t *r)
{
    while (!at_field_end(r)) {
        int c = peek(r, 0), rv;
        if (c == '"')
            return fail_at(r, LC_EINVAL, r->line, r->col, "quote inside an unquoted field");
        if (c == '\r')
            return fail_at(r, LC_EINVAL, r->line, r->col, "carriage return without a line feed");
        if ((rv = take_char(r)) != 0)
            return rv;
    }
    return 0;
}

/* A field in quotes: "" is one quote; commas, CR and LF are text. */
static int read_quoted(reader_t *r)
{
    size_t line = r->line, col = r->col;
    assert(peek(r, 0) == '"');
    r->pos++;
    r->col++;
    for (;;) {
        int c = peek(r, 0), rv;
        if (c < 0)
            return fail_at(r, LC_EINVAL, line, col, "quoted field never closed");
        if (c == '"' && peek(r, 1) == '"') {
            r->text[r->text_len++] = '"';
            r->pos += 2;
            r->col += 2;
        } else if (c == '"') {
            r->pos++;
            r->col++;
            break;
        } else if ((rv = take_char(r)) != 0) {
            return rv;
        }
    }
    if (!at_field_end(r))
        return fail_at(r, LC_EINVAL, r->line, r->col,
                       peek(r, 0) == '\r' ? "carriage return without a line feed"
                                          : "text after a closing quote");
    return 0;
}

/* Reads one field into a new cell; OUT: *end, what ended it (',', '\n', or 0 at the end). */
static int read_field(reader_t *r, int *end)
{
    assert(r->n_cells < r->cap_cells);
    r->offsets[r->n_cells++] = (uint32_t)r->text_len;
    int rv = peek(r, 0) == '"' ? read_quoted(r) : read_unquoted(r);
    if (rv != 0)
        return rv;
    assert(r->text_len < r->len + 1);
    r->text[r->text_len++] = '\0';
    *end = take_field_end(r);
    return 0;
}

/* Whether nothing but line ends is left (blank lines at the end are ignored). */
static bool only_blank_left(const reader_t *r)
{
    for (size_t i = r->pos; i < r->len; i++)
        if (r->s[i] != '\r' && r->s[i] != '\n')
            return false;
    return true;
}

static bool at_blank_line(const reader_t *r)
{
    return peek(r, 0) == '\n' || (peek(r, 0) == '\r' && peek(r, 1) == '\n');
}

/* The cell i's bytes in r's text; OUT: *len. */
static const char *reader_cell(const reader_t *r, size_t i, size_t *len)
{
    size_t end = i + 1 < r->n_cells ? r->offsets[i + 1] : r->text_len;
    *len = end - r->offsets[i] - 1;
    return r->text + r->offsets[i];
}

/* The header's newest field must be a name the others do not have. */
static int check_header_name(reader_t *r, size_t line, size_t col)
{
    size_t len, other_len;
    const char *name = reader_cell(r, r->n_cells - 1, &len);
    const char *problem = name_problem(name, len);
    if (problem != NULL)
        return fail_at(r, LC_EINVAL, line, col, "column name \"%.*s\" %s", quote_len(name, len),
                       name, problem);
    for (size_t i = 0; i + 1 < r->n_cells; i++) {
        const char *other = reader_cell(r, i, &other_len);
        if (other_len == len && memcmp(other, name, len) == 0)
            return fail_at(r, LC_EINVAL, line, col,
                           "column name \"%.*s\" again (column %zu has it)", quote_len(name, len),
                           name, i + 1);
    }
    return 0;
}

static int read_header(reader_t *r)
{
    if (only_blank_left(r))
        return lc_errf(r->errmsg, r->errlen, LC_EINVAL,
                       "empty: a header row naming the columns and at least one row are needed");
    if (at_blank_line(r))
        return fail_at(r, LC_EINVAL, r->line, 0, "blank; the first line names the columns");
    int end, rv;
    do {
        size_t line = r->line, col = r->col;
        if (r->n_cells == LC_CSV_MAX_COLS)
            return fail_at(r, LC_ETOOBIG, line, col, "more than %d columns", LC_CSV_MAX_COLS);
        if ((rv = read_field(r, &end)) != 0 || (rv = check_header_name(r, line, col)) != 0)
            return rv;
    } while (end == ',');
    return 0;
}

static int read_row(reader_t *r, size_t n_cols, size_t n_rows)
{
    size_t line = r->line, first = r->n_cells;
    if (at_blank_line(r))
        return fail_at(r, LC_EINVAL, line, 0, "blank (a row of one empty field is written \"\")");
    if (n_rows == LC_CSV_MAX_ROWS)
        return fail_at(r, LC_ETOOBIG, line, 0, "more than %d rows", LC_CSV_MAX_ROWS);
    int end, rv;
    do {
        if ((rv = read_field(r, &end)) != 0)
            return rv;
    } while (end == ',');
    size_t fields = r->n_cells - first;
    if (fields != n_cols)
        return fail_at(r, LC_EINVAL, line, 0, "%zu field%s, the header has %zu", fields,
                       fields == 1 ? "" : "s", n_cols);
    return 0;
}

/* Building ------------------------------------------------------------------ */

/* Hands text and offsets (n_cells starts, room for one more) to out, names first. */
static int table_take(lc_table_t *out, char *text, size_t text_len, uint32_t *offsets,
                      size_t n_cells, size_t n_cols)
{
    assert(n_cols > 0 && n_cells % n_cols == 0 && n_cells > n_cols);
    char **cols = malloc(n_cols * sizeof *cols);
    if (cols == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < n_cols; i++)
        cols[i] = text + offsets[i];
    offsets[n_cells] = (uint32_t)text_len;
    out->n_cols = n_cols;
    out->n_rows = n_cells / n_cols - 1;
    out->cols = cols;
    out->text = text;
    out->offsets = offsets;
    return 0;
}

/* Gives back the room the up-front estimate did not need; a failed shrink loses nothing. */
static void reader_shrink(reader_t *r)
{
    char *text = realloc(r->text, r->text_len);
    if (text != NULL)
        r->text = text;
    uint32_t *offsets = realloc(r->offsets, (r->n_cells + 1) * sizeof *offsets);
    if (offsets != NULL)
        r->offsets = offsets;
}

static int reader_init(reader_t *r, const char *text, size_t len, char *errmsg, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->s = text;
    r->len = len;
    r->line = r->col = 1;
    r->errmsg = errmsg;
    r->errlen = errlen;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        r->pos = 3; /* a byte order mark, as spreadsheets write: not part of the first name */
    size_t separators = 0;
    for (size_t i = r->pos; i < len; i++)
        separators += text[i] == ',' || text[i] == '\n';
    r->cap_cells = separators + 1;
    r->text = malloc(len + 1);
    r->offsets = malloc((r->cap_cells + 1) * sizeof *r->offsets);
    if (r->text == NULL || r->offsets == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "CSV of %zu bytes: out of memory", len);
    return 0;
}

/* Reads the header and the rows; OUT: *n_cols. */
static int read_table(reader_t *r, size_t *n_cols)
{
    int rv = read_header(r);
    size_t n_rows = 0;
    *n_cols = r->n_cells;
    while (rv == 0 && !only_blank_left(r))
        if ((rv = read_row(r, *n_cols, n_rows)) == 0)
            n_rows++;
    if (rv == 0 && n_rows == 0)
        rv = lc_errf(r->errmsg, r->errlen, LC_EINVAL, "no rows: a feeder needs at least one");
    return rv;
}

int lc_csv_parse(const char *text, size_t len, lc_table_t *out, char *errmsg, size_t errlen)
{
    assert((text != NULL || len == 0) && out != NULL);
    memset(out, 0, sizeof *out);
    if (len > LC_CSV_MAX_BYTES)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "CSV of %zu bytes: more than %d", len,
                       LC_CSV_MAX_BYTES);
    reader_t r;
    size_t n_cols = 0;
    int rv = reader_init(&r, text, len, errmsg, errlen);
    if (rv == 0)
        rv = read_table(&r, &n_cols);
    if (rv == 0) {
        reader_shrink(&r);
        rv = table_take(out, r.text, r.text_len, r.offsets, r.n_cells, n_cols);
    }
    if (rv != 0) {
        free(r.text);
        free(r.offsets);
    }
    return rv;
}

/* Checks the names and the cells given to lc_table_from_rows; OUT: *bytes, their text's size
 * with a NUL each. */
static int check_rows(const char *const *cols, size_t n_cols, const char *const *cells,
                      size_t n_rows, size_t *bytes, char *errmsg, size_t errlen)
{
    *bytes = 0;
    for (size_t c = 0; c < n_cols; c++) {
        size_t len = strlen(cols[c]);
        const char *problem = name_problem(cols[c], len);
        if (problem != NULL)
            return lc_errf(errmsg, errlen, LC_EINVAL, "column name \"%.*s\" %s",
                           quote_len(cols[c], len), cols[c], problem);
        for (size_t o = 0; o < c; o++)
            if (strcmp(cols[o], cols[c]) == 0)
                return lc_errf(errmsg, errlen, LC_EINVAL, "column name \"%s\" twice", cols[c]);
        *bytes += len + 1;
    }
    for (size_t i = 0; i < n_rows * n_cols; i++) {
        const char *cell = cells[i], *name = cols[i % n_cols];
        if (cell == NULL)
            return lc_errf(errmsg, errlen, LC_EINVAL, "rows[%zu]: no \"%s\"", i / n_cols, name);
        size_t len = strnlen(cell, LC_CSV_MAX_BYTES + 1);
        if ((*bytes += len + 1) > LC_CSV_MAX_BYTES)
            return lc_errf(errmsg, errlen, LC_ETOOBIG, "rows[%zu]: the rows pass %d bytes",
                           i / n_cols, LC_CSV_MAX_BYTES);
        for (size_t at = 0, n; at < len; at += n)
            if ((n = lc_utf8_seq_len(cell + at, len - at)) == 0)
                return lc_errf(errmsg, errlen, LC_EINVAL, "rows[%zu].%s: invalid UTF-8",
                               i / n_cols, name);
    }
    return 0;
}

/* Copies s and its NUL as cell i of text. */
static void put_cell(char *text, size_t *text_len, uint32_t *offsets, size_t i, const char *s)
{
    size_t len = strlen(s) + 1;
    offsets[i] = (uint32_t)*text_len;
    memcpy(text + *text_len, s, len);
    *text_len += len;
}

int lc_table_from_rows(const char *const *cols, size_t n_cols, const char *const *cells,
                       size_t n_rows, lc_table_t *out, char *errmsg, size_t errlen)
{
    assert(out != NULL && (cols != NULL || n_cols == 0) && (cells != NULL || n_rows == 0));
    memset(out, 0, sizeof *out);
    if (n_cols == 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "no columns");
    if (n_cols > LC_CSV_MAX_COLS)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "%zu columns: more than %d", n_cols,
                       LC_CSV_MAX_COLS);
    if (n_rows == 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "no rows: a feeder needs at least one");
    if (n_rows > LC_CSV_MAX_ROWS)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "%zu rows: more than %d", n_rows,
                       LC_CSV_MAX_ROWS);
    size_t bytes, n_cells = (n_rows + 1) * n_cols, text_len = 0;
    int rv = check_rows(cols, n_cols, cells, n_rows, &bytes, errmsg, errlen);
    if (rv != 0)
        return rv;
    char *text = malloc(bytes);
    uint32_t *offsets = malloc((n_cells + 1) * sizeof *offsets);
    if (text == NULL || offsets == NULL) {
        rv = LC_ENOMEM;
        goto err_after_alloc;
    }
    for (size_t i = 0; i < n_cells; i++)
        put_cell(text, &text_len, offsets, i, i < n_cols ? cols[i] : cells[i - n_cols]);
    assert(text_len == bytes);
    if ((rv = table_take(out, text, text_len, offsets, n_cells, n_cols)) == 0)
        return 0;
err_after_alloc:
    free(text);
    free(offsets);
    return rv;
}

/* Lookups ------------------------------------------------------------------- */

lc_value_t lc_table_cell(const lc_table_t *t, size_t row, size_t col)
{
    assert(t != NULL && row < t->n_rows && col < t->n_cols);
    lc_value_t v = {.data = "", .len = 0, .type = LC_V_STRING};
    if (row >= t->n_rows || col >= t->n_cols)
        return v; /* a release build survives a caller's bug with an empty cell */
    size_t i = (row + 1) * t->n_cols + col;
    v.data = t->text + t->offsets[i];
    v.len = t->offsets[i + 1] - t->offsets[i] - 1;
    return v;
}

int lc_table_col(const lc_table_t *t, const char *name, size_t len)
{
    assert(t != NULL && (name != NULL || len == 0));
    for (size_t i = 0; i < t->n_cols; i++)
        if (strlen(t->cols[i]) == len && memcmp(t->cols[i], name, len) == 0)
            return (int)i;
    return -1;
}

void lc_table_free(lc_table_t *t)
{
    assert(t != NULL);
    free(t->cols);
    free(t->text);
    free(t->offsets);
    memset(t, 0, sizeof *t);
}
