/* test_lc_table.c — common/lc_table.c: widths from the cells, alignment, cutting and cleaning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_table.h"

static const lc_table_col_t cols[] = {{"NAME", false, 8}, {"N", true, 0}, {"NOTE", false, 0}};

/* Fits then prints the rows (3 cells each) under the titles; the caller frees the text. */
static char *render(const char *const (*rows)[3], size_t n, const char *note)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    lc_table_t t;
    lc_table_init(&t, cols, 3);
    for (size_t i = 0; i < n; i++)
        lc_table_fit(&t, rows[i]);
    lc_table_print_titles(f, &t, note);
    for (size_t i = 0; i < n; i++)
        lc_table_print_row(f, &t, rows[i]);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_columns_fit_the_widest_cell(void **state)
{
    const char *const rows[][3] = {{"a", "1", "x"}, {"bb", "1000000000000", NULL}, {"c", "", "z"}};
    char *out = render(rows, 3, "(ms)");
    assert_string_equal(out, "NAME              N  NOTE  (ms)\n"
                             "a                 1  x\n"
                             "bb    1000000000000\n"
                             "c                    z\n");
    free(out);
}

static void test_long_cells_are_cut_with_an_ellipsis(void **state)
{
    const char *const rows[][3] = {{"abcdefghijk", "1", "a note longer than its title"},
                                   {"abcdefgh", "22", "-"}};
    char *out = render(rows, 2, NULL);
    assert_string_equal(out, "NAME       N  NOTE\n"
                             "abcdefg\xe2\x80\xa6   1  a note longer than its title\n"
                             "abcdefgh  22  -\n");
    free(out);
}

static void test_control_bytes_and_bad_utf8_become_question_marks(void **state)
{
    const char *const rows[][3] = {{"\x1b[2J\n", "1", "caf\xc3\xa9\xff\xc2\x9b"}};
    char *out = render(rows, 1, NULL);
    /* é is one column; ESC, LF, a stray byte and the two bytes of C1 CSI are '?' each. */
    assert_string_equal(out, "NAME   N  NOTE\n"
                             "?[2J?  1  caf\xc3\xa9???\n");
    assert_int_equal(lc_table_text_width("caf\xc3\xa9\xff"), 5);
    assert_int_equal(lc_table_text_width(NULL), 0);
    free(out);
}

static void test_print_text_cleans(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    lc_table_print_text(f, "run 3 \x1b]0;x\x07 ok");
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "run 3 ?]0;x? ok");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_fit_the_widest_cell),
        cmocka_unit_test(test_long_cells_are_cut_with_an_ellipsis),
        cmocka_unit_test(test_control_bytes_and_bad_utf8_become_question_marks),
        cmocka_unit_test(test_print_text_cleans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
