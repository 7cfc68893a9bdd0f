/* test_lc_csv.c — feeder tables: RFC 4180 quoting, line ends, ragged rows, bad names, bytes that
 * are not text, the limits, and tables built from rows matching parsed ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_buf.h"
#include "lc_csv.h"
#include "lc_err.h"

static lc_table_t parse_len(const char *text, size_t len)
{
    lc_table_t t;
    char err[256] = "";
    int rv = lc_csv_parse(text, len, &t, err, sizeof err);
    if (rv != 0)
        fail_msg("parse failed (%d): %s", rv, err);
    return t;
}

static lc_table_t parse(const char *text) { return parse_len(text, strlen(text)); }

/* A parse that must fail with code and exactly message; *out is left empty. */
static void parse_fails_len(const char *text, size_t len, int code, const char *message)
{
    lc_table_t t, zero = {0};
    memset(&t, 0xab, sizeof t);
    char err[256] = "";
    assert_int_equal(lc_csv_parse(text, len, &t, err, sizeof err), code);
    assert_string_equal(err, message);
    assert_memory_equal(&t, &zero, sizeof t);
    lc_table_free(&t);
}

static void parse_fails(const char *text, int code, const char *message)
{
    parse_fails_len(text, strlen(text), code, message);
}

/* The cell as a NUL-terminated string, checking that it is one. */
static const char *cell(const lc_table_t *t, size_t row, size_t col)
{
    lc_value_t v = lc_table_cell(t, row, col);
    assert_int_equal(v.type, LC_V_STRING);
    assert_int_equal(v.data[v.len], '\0');
    assert_int_equal(strlen(v.data), v.len);
    return v.data;
}

static void test_basic(void **state)
{
    static const char *const texts[] = {
        "name,password\nalice,s3cret\nbob,hunter2\n",
        "name,password\nalice,s3cret\nbob,hunter2",          /* no final line end */
        "name,password\r\nalice,s3cret\r\nbob,hunter2\r\n",  /* CRLF */
        "name,password\nalice,s3cret\r\nbob,hunter2\n\n",    /* mixed, a blank final line */
        "name,password\nalice,s3cret\nbob,hunter2\n\r\n\n",  /* several */
        "\xef\xbb\xbfname,password\nalice,s3cret\nbob,hunter2", /* a byte order mark */
        "\"name\",\"password\"\n\"alice\",\"s3cret\"\n\"bob\",\"hunter2\"\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        lc_table_t t = parse(texts[i]);
        assert_int_equal(t.n_cols, 2);
        assert_int_equal(t.n_rows, 2);
        assert_string_equal(t.cols[0], "name");
        assert_string_equal(t.cols[1], "password");
        assert_string_equal(cell(&t, 0, 0), "alice");
        assert_string_equal(cell(&t, 0, 1), "s3cret");
        assert_string_equal(cell(&t, 1, 0), "bob");
        assert_string_equal(cell(&t, 1, 1), "hunter2");
        assert_int_equal(lc_table_col(&t, "password", 8), 1);
        assert_int_equal(lc_table_col(&t, "name", 4), 0);
        assert_int_equal(lc_table_col(&t, "passwordx", 8), 1); /* len counts, not the NUL */
        assert_int_equal(lc_table_col(&t, "pass", 4), -1);
        assert_int_equal(lc_table_col(&t, "Name", 4), -1);
        assert_int_equal(lc_table_col(&t, "", 0), -1);
        lc_table_free(&t);
        lc_table_t zero = {0};
        assert_memory_equal(&t, &zero, sizeof t);
    }
}

static void test_quoted_fields(void **state)
{
    lc_table_t t = parse("a,b,c\n"
                         "\"x,y\",\"say \"\"hi\"\"\",\"\"\n"
                         "\"l1\r\nl2\",\"l1\nl2\",\"\"\"\"\n"
                         ",,\n"
                         " sp , \t,\xc3\xa9\xe2\x82\xac\xef\xbb\xbf\n");
    assert_int_equal(t.n_rows, 4);
    assert_string_equal(cell(&t, 0, 0), "x,y");
    assert_string_equal(cell(&t, 0, 1), "say \"hi\"");
    assert_string_equal(cell(&t, 0, 2), "");
    assert_string_equal(cell(&t, 1, 0), "l1\r\nl2"); /* kept as it is inside quotes */
    assert_string_equal(cell(&t, 1, 1), "l1\nl2");
    assert_string_equal(cell(&t, 1, 2), "\"");
    assert_string_equal(cell(&t, 2, 0), "");
    assert_string_equal(cell(&t, 2, 2), "");
    assert_string_equal(cell(&t, 3, 0), " sp "); /* spaces are data (RFC 4180) */
    assert_string_equal(cell(&t, 3, 1), " \t");
    /* A byte order mark past the start is data. */
    assert_string_equal(cell(&t, 3, 2), "\xc3\xa9\xe2\x82\xac\xef\xbb\xbf");
    lc_table_free(&t);
    t = parse("only\n\"\"");
    assert_int_equal(t.n_rows, 1);
    assert_string_equal(cell(&t, 0, 0), "");
    lc_table_free(&t);
    t = parse("q\n\"x\"");
    assert_string_equal(cell(&t, 0, 0), "x");
    lc_table_free(&t);
}

static void test_names(void **state)
{
    lc_table_t t = parse("_x,X9,a,A,snake_case_2\n1,2,3,4,5\n");
    assert_int_equal(t.n_cols, 5);
    assert_string_equal(t.cols[4], "snake_case_2");
    assert_int_equal(lc_table_col(&t, "A", 1), 3);
    lc_table_free(&t);
    parse_fails("1a,b\n1,2\n", LC_EINVAL,
                "line 1, column 1: column name \"1a\" must start with a letter or '_'");
    parse_fails("a,b-c\n1,2\n", LC_EINVAL,
                "line 1, column 3: column name \"b-c\" may hold only letters, digits and '_'");
    parse_fails("a,,b\n1,2,3\n", LC_EINVAL, "line 1, column 3: column name \"\" is empty");
    parse_fails("a,b,\n1,2,3\n", LC_EINVAL, "line 1, column 5: column name \"\" is empty");
    parse_fails("a,b,a\n1,2,3\n", LC_EINVAL,
                "line 1, column 5: column name \"a\" again (column 1 has it)");
    parse_fails("a b\n1\n", LC_EINVAL,
                "line 1, column 1: column name \"a b\" may hold only letters, digits and '_'");
    parse_fails("\xc3\xa9t\xc3\xa9,b\n1,2\n", LC_EINVAL,
                "line 1, column 1: column name \"\xc3\xa9t\xc3\xa9\" must start with a letter or "
                "'_'");
    parse_fails("x,\"a\nb\"\n1,2\n", LC_EINVAL,
                "line 1, column 3: column name \"a\nb\" may hold only letters, digits and '_'");
    /* A long bad name is quoted in part, cut at a character boundary. */
    char text[200];
    snprintf(text, sizeof text, "a,%s\xc3\xa9xyz\n1,2\n",
             "b123456789012345678901234567890123456-x");
    parse_fails(text, LC_EINVAL,
                "line 1, column 3: column name \"b123456789012345678901234567890123456-x\" may "
                "hold only letters, digits and '_'");
    snprintf(text, sizeof text, "a,b%s\xc3\xa9xyz\n1,2\n", "12345678901234567890123456789012345-x");
    parse_fails(text, LC_EINVAL,
                "line 1, column 3: column name \"b12345678901234567890123456789012345-x"
                "\xc3\xa9\" may hold only letters, digits and '_'");
}

static void test_ragged_rows(void **state)
{
    parse_fails("a,b,c\n1,2,3\n1,2\n", LC_EINVAL, "line 3: 2 fields, the header has 3");
    parse_fails("a,b,c\n1,2,3\n1,2,3,4\n", LC_EINVAL, "line 3: 4 fields, the header has 3");
    parse_fails("a,b\nx\n", LC_EINVAL, "line 2: 1 field, the header has 2");
    parse_fails("a,b\n1,2\n3,4\n5", LC_EINVAL, "line 4: 1 field, the header has 2");
    /* Lines are counted in the text, newlines inside quotes too. */
    parse_fails("a,b\n\"x\ny\",1\n\"p\r\nq\",2\n1\n", LC_EINVAL,
                "line 6: 1 field, the header has 2");
    parse_fails("a,b\n1,2\n\n3,4\n", LC_EINVAL,
                "line 3: blank (a row of one empty field is written \"\")");
    parse_fails("a\n1\r\n\r\n2\n", LC_EINVAL,
                "line 3: blank (a row of one empty field is written \"\")");
}

static void test_quote_errors(void **state)
{
    parse_fails("a,b\n1,x\"y\n", LC_EINVAL, "line 2, column 4: quote inside an unquoted field");
    parse_fails("a,b\n1,x\"\n", LC_EINVAL, "line 2, column 4: quote inside an unquoted field");
    parse_fails("a\n \"x\"\n", LC_EINVAL, "line 2, column 2: quote inside an unquoted field");
    parse_fails("a\n\"abc\"x\n", LC_EINVAL, "line 2, column 6: text after a closing quote");
    parse_fails("a\n\"abc\" \n", LC_EINVAL, "line 2, column 6: text after a closing quote");
    parse_fails("a\n\"ab\"\"\"c\n", LC_EINVAL, "line 2, column 7: text after a closing quote");
    parse_fails("a\n1\n\"abc\n", LC_EINVAL, "line 3, column 1: quoted field never closed");
    parse_fails("a\n1\n\"abc\"\"", LC_EINVAL, "line 3, column 1: quoted field never closed");
    parse_fails("a,b\n1,\"", LC_EINVAL, "line 2, column 3: quoted field never closed");
    parse_fails("a,b\r1,2\n", LC_EINVAL, "line 1, column 4: carriage return without a line feed");
    parse_fails("a\n\"x\"\r1\n", LC_EINVAL,
                "line 2, column 4: carriage return without a line feed");
    parse_fails("a\n1\r", LC_EINVAL, "line 2, column 2: carriage return without a line feed");
    /* Columns count characters, not bytes. */
    parse_fails("a,b\n\xc3\xa9,\"x\"y\n", LC_EINVAL,
                "line 2, column 6: text after a closing quote");
}

static void test_not_text(void **state)
{
    parse_fails_len("a,b\n1,\0\n", 8, LC_EINVAL, "line 2, column 3: NUL byte");
    parse_fails_len("a,b\n1,\"x\0\"\n", 11, LC_EINVAL, "line 2, column 5: NUL byte");
    parse_fails_len("a\0,b\n1,2\n", 9, LC_EINVAL, "line 1, column 2: NUL byte");
    parse_fails("a\n\xff\n", LC_EINVAL, "line 2, column 1: invalid UTF-8");
    parse_fails("a\nx\xc0\xaf\n", LC_EINVAL, "line 2, column 2: invalid UTF-8"); /* overlong */
    parse_fails("a\n\"\xed\xa0\x80\"\n", LC_EINVAL, "line 2, column 2: invalid UTF-8"); /* U+D800 */
    parse_fails("a\n\xc3", LC_EINVAL, "line 2, column 1: invalid UTF-8"); /* cut short */
    parse_fails("a\n\xe2\x82", LC_EINVAL, "line 2, column 1: invalid UTF-8");
    parse_fails("\xef\xbb\xbf\xef\xbb,b\n", LC_EINVAL, "line 1, column 1: invalid UTF-8");
}

static void test_empty_and_header_only(void **state)
{
    static const char empty[] =
        "empty: a header row naming the columns and at least one row are needed";
    parse_fails("", LC_EINVAL, empty);
    parse_fails_len(NULL, 0, LC_EINVAL, empty);
    parse_fails("\n\r\n\n", LC_EINVAL, empty);
    parse_fails("\xef\xbb\xbf", LC_EINVAL, empty);
    parse_fails("a,b", LC_EINVAL, "no rows: a feeder needs at least one");
    parse_fails("a,b\n", LC_EINVAL, "no rows: a feeder needs at least one");
    parse_fails("a,b\r\n\r\n\n", LC_EINVAL, "no rows: a feeder needs at least one");
    parse_fails("\na,b\n1,2\n", LC_EINVAL, "line 1: blank; the first line names the columns");
}

/* Appends s n times to b (which grows geometrically: ASan's realloc copies every time). */
static void repeat(lc_buf_t *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(lc_buf_append(b, s, strlen(s)), 0);
}

/* Cuts b back to its first len bytes. */
static void cut(lc_buf_t *b, size_t len)
{
    assert_true(len <= b->len);
    b->len = len;
    b->data[len] = '\0';
}

/* Appends n distinct column names "c0,c1,..."; OUT: *col_past, the column where the name after
 * the first past_n starts. */
static void names(lc_buf_t *b, int n, int past_n, size_t *col_past)
{
    char name[16];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%sc%d", i ? "," : "", i);
        repeat(b, name, 1);
        if (i == past_n - 1)
            *col_past = b->len + 2;
    }
}

/* The CSV in b must be refused at the 257th name, which starts at column col. */
static void too_many_columns(const lc_buf_t *b, size_t col)
{
    char message[80];
    snprintf(message, sizeof message, "line 1, column %zu: more than 256 columns", col);
    parse_fails_len(b->data, b->len, LC_ETOOBIG, message);
}

static void test_column_limit(void **state)
{
    lc_buf_t b = {0};
    size_t col_257 = 0;
    names(&b, LC_CSV_MAX_COLS, LC_CSV_MAX_COLS, &col_257);
    size_t header_len = b.len;
    repeat(&b, "\n", 1);
    repeat(&b, ",", LC_CSV_MAX_COLS - 1);
    lc_table_t t = parse_len(b.data, b.len);
    assert_int_equal(t.n_cols, LC_CSV_MAX_COLS);
    assert_string_equal(t.cols[255], "c255");
    assert_string_equal(cell(&t, 0, 255), "");
    lc_table_free(&t);
    /* One more column: refused where it starts. */
    cut(&b, header_len);
    repeat(&b, ",x\n1\n", 1);
    too_many_columns(&b, col_257);
    lc_buf_free(&b);
}

static void test_huge_field_counts(void **state)
{
    lc_buf_t b = {0};
    repeat(&b, "a\n", 1);
    repeat(&b, ",", 200000);
    parse_fails_len(b.data, b.len, LC_EINVAL, "line 2: 200001 fields, the header has 1");
    /* 100,000 distinct names: refused at the 257th. */
    cut(&b, 0);
    size_t col_257 = 0;
    names(&b, 100000, LC_CSV_MAX_COLS, &col_257);
    repeat(&b, "\n1\n", 1);
    too_many_columns(&b, col_257);
    lc_buf_free(&b);
}

static void test_size_limit(void **state)
{
    /* Exactly 1 MiB: "v\n" and 524,287 rows of "x\n". */
    lc_buf_t b = {0};
    repeat(&b, "v\n", 1);
    repeat(&b, "x\n", LC_CSV_MAX_BYTES / 2 - 1);
    assert_int_equal(b.len, LC_CSV_MAX_BYTES);
    lc_table_t t = parse_len(b.data, b.len);
    assert_int_equal(t.n_rows, LC_CSV_MAX_BYTES / 2 - 1);
    assert_string_equal(cell(&t, t.n_rows - 1, 0), "x");
    lc_table_free(&t);
    repeat(&b, "x", 1);
    parse_fails_len(b.data, b.len, LC_ETOOBIG, "CSV of 1048577 bytes: more than 1048576");
    lc_buf_free(&b);
}

static void test_from_rows_matches_parse(void **state)
{
    const char *cols[] = {"name", "password"};
    const char *cells[] = {"alice", "s3cret", "bob", "say \"hi\"\n", "", "\xc3\xa9"};
    lc_table_t t, p = parse("name,password\nalice,s3cret\nbob,\"say \"\"hi\"\"\n\"\n,\xc3\xa9\n");
    char err[200];
    assert_int_equal(lc_table_from_rows(cols, 2, cells, 3, &t, err, sizeof err), 0);
    assert_int_equal(t.n_cols, p.n_cols);
    assert_int_equal(t.n_rows, p.n_rows);
    for (size_t c = 0; c < 2; c++)
        assert_string_equal(t.cols[c], p.cols[c]);
    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 2; c++)
            assert_string_equal(cell(&t, r, c), cell(&p, r, c));
    assert_int_equal(lc_table_col(&t, "password", 8), 1);
    lc_table_free(&t);
    lc_table_free(&p);
}

static void from_rows_fails(const char *const *cols, size_t n_cols, const char *const *cells,
                            size_t n_rows, int code, const char *message)
{
    lc_table_t t, zero = {0};
    char err[200] = "";
    assert_int_equal(lc_table_from_rows(cols, n_cols, cells, n_rows, &t, err, sizeof err), code);
    assert_string_equal(err, message);
    assert_memory_equal(&t, &zero, sizeof t);
}

static void test_from_rows_errors(void **state)
{
    const char *cols[] = {"name", "password"};
    const char *missing[] = {"alice", "x", "bob", NULL};
    from_rows_fails(cols, 2, missing, 2, LC_EINVAL, "rows[1]: no \"password\"");
    const char *bad_utf8[] = {"alice", "\xff"};
    from_rows_fails(cols, 2, bad_utf8, 1, LC_EINVAL, "rows[0].password: invalid UTF-8");
    const char *ok[] = {"a", "b"};
    from_rows_fails(cols, 2, ok, 0, LC_EINVAL, "no rows: a feeder needs at least one");
    from_rows_fails(cols, 0, ok, 1, LC_EINVAL, "no columns");
    const char *dup[] = {"name", "name"};
    from_rows_fails(dup, 2, ok, 1, LC_EINVAL, "column name \"name\" twice");
    const char *bad[] = {"name", "pass-word"};
    from_rows_fails(bad, 2, ok, 1, LC_EINVAL,
                    "column name \"pass-word\" may hold only letters, digits and '_'");
    const char *empty[] = {""};
    from_rows_fails(empty, 1, ok, 1, LC_EINVAL, "column name \"\" is empty");
    const char *many[LC_CSV_MAX_COLS + 1] = {0};
    from_rows_fails(many, LC_CSV_MAX_COLS + 1, ok, 1, LC_ETOOBIG, "257 columns: more than 256");
    from_rows_fails(cols, 2, ok, LC_CSV_MAX_ROWS + 1, LC_ETOOBIG,
                    "1000001 rows: more than 1000000");
    /* Past 1 MiB of text. */
    char *big = malloc(LC_CSV_MAX_BYTES / 2 + 1);
    assert_non_null(big);
    memset(big, 'x', LC_CSV_MAX_BYTES / 2);
    big[LC_CSV_MAX_BYTES / 2] = '\0';
    const char *halves[] = {big, big};
    from_rows_fails(cols, 2, halves, 1, LC_ETOOBIG, "rows[0]: the rows pass 1048576 bytes");
    free(big);
}

static void test_from_rows_row_limit(void **state)
{
    const char *cols[] = {"v"};
    const char **cells = malloc(LC_CSV_MAX_ROWS * sizeof *cells);
    assert_non_null(cells);
    for (size_t i = 0; i < LC_CSV_MAX_ROWS; i++)
        cells[i] = "";
    lc_table_t t;
    char err[200];
    assert_int_equal(lc_table_from_rows(cols, 1, cells, LC_CSV_MAX_ROWS, &t, err, sizeof err), 0);
    assert_int_equal(t.n_rows, LC_CSV_MAX_ROWS);
    assert_string_equal(cell(&t, LC_CSV_MAX_ROWS - 1, 0), "");
    lc_table_free(&t);
    free(cells);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_quoted_fields),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_ragged_rows),
        cmocka_unit_test(test_quote_errors),
        cmocka_unit_test(test_not_text),
        cmocka_unit_test(test_empty_and_header_only),
        cmocka_unit_test(test_column_limit),
        cmocka_unit_test(test_huge_field_counts),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_from_rows_matches_parse),
        cmocka_unit_test(test_from_rows_errors),
        cmocka_unit_test(test_from_rows_row_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
