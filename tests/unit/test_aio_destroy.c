/* test_aio_destroy.c — master/cluster/aio_destroy.c: io_destroy(2) through syscall(3) passes
 * through until aio_destroy_off_loop(), then returns at once and the context is destroyed on
 * a thread; every other system call passes through with its arguments and errno. */
#include <errno.h>
#include <linux/aio_abi.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "aio_destroy.h"

static aio_context_t setup_context(void)
{
    aio_context_t ctx = 0;
    assert_int_equal(syscall(SYS_io_setup, 4, &ctx), 0);
    assert_true(ctx != 0);
    return ctx;
}

/* Whether ctx is gone: io_getevents on it fails with EINVAL. */
static bool destroyed(aio_context_t ctx)
{
    struct io_event ev;
    struct timespec none = {0, 0};
    return syscall(SYS_io_getevents, ctx, 0, 1, &ev, &none) == -1 && errno == EINVAL;
}

static void test_passes_through_before(void **state)
{
    (void)state;
    assert_int_equal(syscall(SYS_getpid), getpid());
    aio_context_t ctx = setup_context();
    assert_false(destroyed(ctx));
    assert_int_equal(syscall(SYS_io_destroy, ctx), 0);
    assert_true(destroyed(ctx)); /* at once: it ran in place */
    assert_int_equal(aio_destroy_deferred(), 0);
    /* errno as the C library sets it */
    assert_int_equal(syscall(SYS_close, -1), -1);
    assert_int_equal(errno, EBADF);
}

static void test_off_loop(void **state)
{
    (void)state;
    aio_destroy_off_loop();
    aio_context_t ctx = setup_context();
    assert_int_equal(syscall(SYS_io_destroy, ctx), 0);
    /* Deferred to a thread (in place only when no thread can be made: not here). */
    assert_int_equal(aio_destroy_deferred(), 1);
    assert_int_equal(aio_destroy_in_place(), 0);
    /* the thread destroys it: within 5 s, polled every 10 ms */
    for (int i = 0; i < 500 && !destroyed(ctx); i++)
        usleep(10000);
    assert_true(destroyed(ctx));
    assert_int_equal(syscall(SYS_getppid), getppid()); /* others still pass through */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passes_through_before),
        cmocka_unit_test(test_off_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
