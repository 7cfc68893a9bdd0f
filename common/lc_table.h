/* lc_table.h — plain-text tables whose columns are as wide as their widest cell, so no value,
 * however large, runs into its neighbour. */
#ifndef LC_TABLE_H
#define LC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LC_TABLE_COLS_MAX 16
#define LC_TABLE_GAP 2 /* spaces between two columns */

/* Widths are display columns, one per code point. */
typedef struct lc_table_col_s {
    const char *title;
    bool right;       /* right-aligned (numbers), title too; else left-aligned */
    size_t max_width; /* 0: none; a longer cell is cut to max_width columns ending in "…" */
} lc_table_col_t;

/* Used in two passes: lc_table_fit every row, then print the titles and every row again. */
typedef struct lc_table_s {
    /* read-only */
    const lc_table_col_t *cols;
    size_t ncols;
    size_t width[LC_TABLE_COLS_MAX]; /* grown by lc_table_fit; never below the title's */
} lc_table_t;

/* cols must outlive t; ncols is 1 to LC_TABLE_COLS_MAX, and every max_width (when set) at least
 * its title's width. */
void lc_table_init(lc_table_t *t, const lc_table_col_t *cols, size_t ncols);

/* Widens the columns to hold one row: ncols cells, NULL for an empty one. */
void lc_table_fit(lc_table_t *t, const char *const *cells);

/* Prints the titles and, when note is not NULL, the note after them. */
void lc_table_print_titles(FILE *out, const lc_table_t *t, const char *note);

/* Prints one row (as given to lc_table_fit): control characters and bytes that are not UTF-8
 * become '?', so text from the network cannot move the cursor. No trailing spaces. */
void lc_table_print_row(FILE *out, const lc_table_t *t, const char *const *cells);

/* Prints s as a cell shows it, without padding or newline (a line above a table). */
void lc_table_print_text(FILE *out, const char *s);

/* Display width of s as a cell shows it: one column per code point or replaced byte. */
size_t lc_table_text_width(const char *s);

#endif
