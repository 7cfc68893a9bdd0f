/* test_sysinfo.c — worker/sysinfo.c's CPU use: the process's CPU over wall time, less the
 * time its engines polled without finding work (busy_poll.h), never below 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "lc_clock.h"
#include "sysinfo.h"

/* Spins on this thread for ms of wall time; returns how long it took, in ns. */
static uint64_t spin_ms(unsigned ms)
{
    uint64_t start = lc_mono_ns(), now;
    volatile uint64_t sink = 0;
    while ((now = lc_mono_ns()) - start < ms * 1000000ull)
        sink++;
    return now - start;
}

static void busy_counts_polled_does_not(void **state)
{
    (void)state;
    worker_cpu_t cpu;
    worker_cpu_init(&cpu, 0);
    spin_ms(200);
    /* One thread spun: its CPU shows (a loaded machine may have given it less than all). */
    double busy = worker_cpu_percent(&cpu, 1, 0);
    print_message("spinning, counted as work: %.1f %%\n", busy);
    assert_true(busy > 20.0 && busy <= 110.0);
    /* The same spin reported as polling: idle (within the kernel's accounting), */
    uint64_t polled = spin_ms(200);
    double idle = worker_cpu_percent(&cpu, 1, polled);
    print_message("spinning, counted as polling: %.1f %%\n", idle);
    assert_true(idle >= 0.0 && idle < 10.0);
    /* and never below 0 when the polled time (wall clock) exceeds the CPU time (the
     * kernel's ticks): here twice the spin. */
    uint64_t more = spin_ms(100);
    assert_true(worker_cpu_percent(&cpu, 1, polled + 2 * more) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_counts_polled_does_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
