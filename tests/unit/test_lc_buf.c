/* test_lc_buf.c — unit tests for common/lc_buf.c: appends, printf-appends, growth and reserve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lc_buf.h"
#include "lc_err.h"

static void test_empty(void **state)
{
    lc_buf_t b;
    memset(&b, 0x5a, sizeof b);
    lc_buf_init(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    /* Appending nothing still gives a "" to hand out. */
    assert_int_equal(lc_buf_append(&b, "", 0), 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    assert_int_equal(b.len, 0);
    lc_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.cap, 0);
}

static void test_append_bytes(void **state)
{
    lc_buf_t b = {0};
    assert_int_equal(lc_buf_append(&b, "ab\0cd", 5), 0);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "ab\0cd", 6);
    assert_int_equal(lc_buf_append(&b, "ef", 2), 0);
    assert_memory_equal(b.data, "ab\0cdef", 8);
    assert_int_equal(b.len, 7);
    assert_true(b.cap > b.len);
    lc_buf_free(&b);
}

static void test_appendf(void **state)
{
    lc_buf_t b = {0};
    assert_int_equal(lc_buf_appendf(&b, "%s %d", "GET", 200), 0);
    assert_int_equal(lc_buf_appendf(&b, "%s", ""), 0);
    assert_int_equal(lc_buf_appendf(&b, "|%05u|", 42u), 0);
    assert_string_equal(b.data, "GET 200|00042|");
    assert_int_equal(b.len, strlen("GET 200|00042|"));
    lc_buf_free(&b);
}

/* Text past the room left makes the buffer grow, with every byte kept. */
static void test_growth(void **state)
{
    lc_buf_t b = {0};
    char want[20000];
    size_t n = 0;
    for (unsigned i = 0; n + 16 < sizeof want; i++) {
        assert_int_equal(lc_buf_appendf(&b, "%u,", i), 0);
        n += (size_t)snprintf(want + n, sizeof want - n, "%u,", i);
        assert_int_equal(b.len, n);
        assert_true(b.cap > b.len);
    }
    assert_string_equal(b.data, want);

    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t before = b.len;
    assert_int_equal(lc_buf_appendf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, before + sizeof big + 1);
    assert_int_equal(b.data[before], '<');
    assert_int_equal(b.data[b.len - 1], '>');
    assert_int_equal(b.data[b.len], '\0');
    lc_buf_free(&b);
}

static void test_reserve(void **state)
{
    lc_buf_t b = {0};
    assert_int_equal(lc_buf_reserve(&b, 1000), 0);
    assert_true(b.cap >= 1001);
    assert_string_equal(b.data, "");
    char *kept = b.data;
    size_t cap = b.cap;
    for (int i = 0; i < 100; i++)
        assert_int_equal(lc_buf_append(&b, "0123456789", 10), 0);
    assert_ptr_equal(b.data, kept); /* reserved room is used without moving */
    assert_int_equal(b.cap, cap);
    assert_int_equal(lc_buf_reserve(&b, SIZE_MAX), LC_ENOMEM);
    volatile size_t huge = SIZE_MAX - 2; /* not a constant: GCC would flag the fast path's memcpy */
    assert_int_equal(lc_buf_append(&b, "x", huge), LC_ENOMEM);
    assert_int_equal(b.len, 1000); /* unchanged by the failures */
    assert_int_equal(b.data[1000], '\0');
    lc_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),   cmocka_unit_test(test_append_bytes),
        cmocka_unit_test(test_appendf), cmocka_unit_test(test_growth),
        cmocka_unit_test(test_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
