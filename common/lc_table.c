/* lc_table.c — tables sized to their cells: widths from a first pass, aligned cells from a
 * second. */
#include "lc_table.h"

#include <assert.h>
#include <string.h>

#include "lc_utf8.h"

#define ELLIPSIS "\xe2\x80\xa6" /* "…", one column */

/* Writes a line, holding back spaces until something follows them, so lines never end in
 * spaces. */
typedef struct line_s {
    FILE *out;
    size_t spaces;
} line_t;

static void line_pad(line_t *l, size_t n)
{
    l->spaces += n;
}

static void line_write(line_t *l, const char *s, size_t n)
{
    for (; l->spaces > 0; l->spaces--)
        fputc(' ', l->out);
    fwrite(s, 1, n, l->out);
}

static void line_end(line_t *l)
{
    l->spaces = 0;
    fputc('\n', l->out);
}

/* Bytes of the unit at s: a UTF-8 sequence to print as it is, or 0 for a byte shown as '?'
 * (not UTF-8, or a C0 or C1 control character or DEL). */
static size_t printable_len(const char *s)
{
    size_t n = lc_utf8_seq_len(s, strnlen(s, 4));
    unsigned char c = (unsigned char)s[0];
    if (n == 0 || c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)s[1] < 0xa0))
        return 0;
    return n;
}

size_t lc_table_text_width(const char *s)
{
    size_t w = 0;
    for (; s != NULL && *s != '\0'; w++) {
        size_t n = printable_len(s);
        s += n ? n : 1;
    }
    return w;
}

/* Writes the first cols units of s. */
static void put_text(line_t *l, const char *s, size_t cols)
{
    for (size_t w = 0; s != NULL && *s != '\0' && w < cols; w++) {
        size_t n = printable_len(s);
        line_write(l, n ? s : "?", n ? n : 1);
        s += n ? n : 1;
    }
}

static size_t cell_width(const lc_table_col_t *col, const char *s)
{
    size_t w = lc_table_text_width(s);
    return col->max_width > 0 && w > col->max_width ? col->max_width : w;
}

void lc_table_init(lc_table_t *t, const lc_table_col_t *cols, size_t ncols)
{
    assert(ncols >= 1 && ncols <= LC_TABLE_COLS_MAX);
    t->cols = cols;
    t->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        t->width[i] = lc_table_text_width(cols[i].title);
        assert(cols[i].max_width == 0 || cols[i].max_width >= t->width[i]);
    }
}

void lc_table_fit(lc_table_t *t, const char *const *cells)
{
    for (size_t i = 0; i < t->ncols; i++) {
        size_t w = cell_width(&t->cols[i], cells[i]);
        if (w > t->width[i])
            t->width[i] = w;
    }
}

/* Column i's cell: the gap before it, padding on the aligned side, s cut to the column. */
static void put_cell(line_t *l, const lc_table_t *t, size_t i, const char *s)
{
    const lc_table_col_t *col = &t->cols[i];
    size_t full = lc_table_text_width(s), w = cell_width(col, s);
    assert(w <= t->width[i]); /* the row went through lc_table_fit */
    size_t pad = w <= t->width[i] ? t->width[i] - w : 0;
    if (i > 0)
        line_pad(l, LC_TABLE_GAP);
    if (col->right)
        line_pad(l, pad);
    if (full > w) {
        put_text(l, s, w - 1);
        line_write(l, ELLIPSIS, strlen(ELLIPSIS));
    } else {
        put_text(l, s, w);
    }
    if (!col->right)
        line_pad(l, pad);
}

void lc_table_print_titles(FILE *out, const lc_table_t *t, const char *note)
{
    line_t l = {out, 0};
    for (size_t i = 0; i < t->ncols; i++)
        put_cell(&l, t, i, t->cols[i].title);
    if (note != NULL) {
        line_pad(&l, LC_TABLE_GAP);
        put_text(&l, note, lc_table_text_width(note));
    }
    line_end(&l);
}

void lc_table_print_row(FILE *out, const lc_table_t *t, const char *const *cells)
{
    line_t l = {out, 0};
    for (size_t i = 0; i < t->ncols; i++)
        put_cell(&l, t, i, cells[i]);
    line_end(&l);
}

void lc_table_print_text(FILE *out, const char *s)
{
    line_t l = {out, 0};
    put_text(&l, s, lc_table_text_width(s));
}
