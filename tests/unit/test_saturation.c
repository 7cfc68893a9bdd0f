/* test_saturation.c — the saturation policy: shedding after 3 hot heartbeats,
 * recovery in steps after 3 cool ones, the dead band between, NaN, capacity
 * 0, and its invariants on a long random sequence of heartbeats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "saturation.h"

#define HOT 95.0
#define COOL 50.0
#define WARM 80.0 /* between RECOVERY_CPU and SATURATION_CPU */

/* n heartbeats at cpu; returns the last one's change and asserts the ones
 * before it changed nothing. */
static saturation_change_t beats(saturation_t *s, int n, double cpu, uint64_t users)
{
    for (int i = 1; i < n; i++)
        assert_int_equal(saturation_note(s, cpu, users), SATURATION_UNCHANGED);
    return saturation_note(s, cpu, users);
}

/* A worker with capacity 1000 saturated at 500 users: effective 450. */
static saturation_t saturated_at_450(void)
{
    saturation_t s = saturation_start(1000);
    assert_int_equal(beats(&s, 3, HOT, 500), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 450);
    assert_true(s.saturated);
    return s;
}

static void test_start(void **state)
{
    (void)state;
    saturation_t s = saturation_start(300);
    assert_int_equal(s.capacity, 300);
    assert_int_equal(s.effective_capacity, 300);
    assert_false(s.saturated);
    assert_int_equal(s.hot_beats, 0);
    assert_int_equal(s.cool_beats, 0);
}

static void test_three_hot_beats_saturate_two_do_not(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(saturation_note(&s, HOT, 100), SATURATION_UNCHANGED);
    assert_int_equal(saturation_note(&s, HOT, 100), SATURATION_UNCHANGED);
    assert_int_equal(s.hot_beats, 2);
    assert_false(s.saturated);
    assert_int_equal(s.effective_capacity, 100);

    assert_int_equal(saturation_note(&s, HOT, 100), SATURATION_SHED);
    assert_true(s.saturated);
    assert_int_equal(s.effective_capacity, 90); /* 90 % of the 100 users it runs */
    assert_int_equal(s.hot_beats, 0);
}

/* 90 % is the threshold itself, not above it. */
static void test_exactly_90_is_not_hot(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(beats(&s, 10, SATURATION_CPU, 100), SATURATION_UNCHANGED);
    assert_false(s.saturated);
    assert_int_equal(s.hot_beats, 0);
    assert_int_equal(beats(&s, 3, 90.01, 100), SATURATION_SHED);
}

static void test_cool_beat_in_between_resets_count(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(beats(&s, 2, HOT, 100), SATURATION_UNCHANGED);
    assert_int_equal(saturation_note(&s, COOL, 100), SATURATION_UNCHANGED);
    assert_int_equal(s.hot_beats, 0);
    assert_int_equal(beats(&s, 2, HOT, 100), SATURATION_UNCHANGED);
    /* a warm beat (not hot) resets it as well */
    assert_int_equal(saturation_note(&s, WARM, 100), SATURATION_UNCHANGED);
    assert_int_equal(beats(&s, 2, HOT, 100), SATURATION_UNCHANGED);
    assert_false(s.saturated);
    assert_int_equal(s.effective_capacity, 100);
    assert_int_equal(saturation_note(&s, HOT, 100), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 90);
}

static void test_more_hot_beats_shed_more_never_raise(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(beats(&s, 3, HOT, 100), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 90);
    /* the scheduler gave it 90: 3 more hot beats shed another 10 % */
    assert_int_equal(beats(&s, 3, HOT, 90), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 81);
    /* it reports more users than it may have: the capacity does not go up */
    assert_int_equal(beats(&s, 3, HOT, 500), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 81);
    assert_true(s.saturated);
    /* 90 % of 90 users = 81: no change either */
    assert_int_equal(beats(&s, 3, HOT, 90), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 81);
    assert_int_equal(beats(&s, 3, HOT, 81), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 72); /* 81 * 9 / 10 = 72.9, rounded down */
}

/* A hot worker running more than 90 % of its capacity becomes saturated
 * without losing capacity (90 % of what it runs is above what it has). */
static void test_saturated_at_full_capacity(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(beats(&s, 3, HOT, 200), SATURATION_SHED);
    assert_true(s.saturated);
    assert_int_equal(s.effective_capacity, 100);
    assert_int_equal(beats(&s, 3, COOL, 200), SATURATION_RECOVERED);
    assert_false(s.saturated);
    assert_int_equal(s.effective_capacity, 100);
}

static void test_recovery_in_steps(void **state)
{
    (void)state;
    saturation_t s = saturated_at_450();
    assert_int_equal(beats(&s, 2, COOL, 450), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 450);
    /* a quarter of the 550 it lacks */
    assert_int_equal(saturation_note(&s, COOL, 450), SATURATION_RECOVERING);
    assert_int_equal(s.effective_capacity, 450 + 137);
    assert_true(s.saturated);
    assert_int_equal(beats(&s, 3, COOL, 587), SATURATION_RECOVERING);
    assert_int_equal(s.effective_capacity, 587 + 103); /* 413 / 4 */
    /* 310 / 4 = 77 is less than 10 % of the capacity: 100 */
    assert_int_equal(beats(&s, 3, COOL, 690), SATURATION_RECOVERING);
    assert_int_equal(s.effective_capacity, 790);
    assert_int_equal(beats(&s, 3, COOL, 790), SATURATION_RECOVERING);
    assert_int_equal(s.effective_capacity, 890);
    assert_int_equal(beats(&s, 3, COOL, 890), SATURATION_RECOVERING);
    assert_int_equal(s.effective_capacity, 990);
    /* the last 10 are less than a step: all of it is back */
    assert_int_equal(beats(&s, 3, COOL, 990), SATURATION_RECOVERED);
    assert_int_equal(s.effective_capacity, 1000);
    assert_false(s.saturated);
    /* an unsaturated cool worker has nothing to recover */
    assert_int_equal(beats(&s, 9, COOL, 1000), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 1000);
}

/* With a step below one user, recovery gives everything back at once. */
static void test_small_capacity_recovers_at_once(void **state)
{
    (void)state;
    saturation_t s = saturation_start(5);
    assert_int_equal(beats(&s, 3, HOT, 3), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 2);
    assert_int_equal(beats(&s, 3, COOL, 2), SATURATION_RECOVERED);
    assert_int_equal(s.effective_capacity, 5);
    assert_false(s.saturated);
}

static void test_hot_beat_interrupts_recovery(void **state)
{
    (void)state;
    saturation_t s = saturated_at_450();
    assert_int_equal(beats(&s, 2, COOL, 450), SATURATION_UNCHANGED);
    assert_int_equal(saturation_note(&s, HOT, 450), SATURATION_UNCHANGED);
    assert_int_equal(s.cool_beats, 0);
    assert_int_equal(beats(&s, 2, COOL, 450), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 450);
    assert_int_equal(saturation_note(&s, COOL, 450), SATURATION_RECOVERING);
}

static void test_between_75_and_90_nothing_changes(void **state)
{
    (void)state;
    saturation_t s = saturated_at_450();
    double warm[] = {RECOVERY_CPU, 75.01, WARM, 89.99, SATURATION_CPU};
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < sizeof warm / sizeof warm[0]; i++) {
            assert_int_equal(saturation_note(&s, warm[i], 450), SATURATION_UNCHANGED);
            assert_int_equal(s.hot_beats, 0);
            assert_int_equal(s.cool_beats, 0);
        }
    }
    assert_true(s.saturated);
    assert_int_equal(s.effective_capacity, 450);

    saturation_t u = saturation_start(100);
    assert_int_equal(beats(&u, 20, WARM, 100), SATURATION_UNCHANGED);
    assert_false(u.saturated);
    assert_int_equal(u.effective_capacity, 100);
}

/* NaN compares false with everything: it is neither hot (> 90) nor cool
 * (< 75), so it changes nothing and resets both counters, as a warm
 * heartbeat does. */
static void test_nan_changes_nothing_and_resets_counters(void **state)
{
    (void)state;
    saturation_t s = saturation_start(100);
    assert_int_equal(beats(&s, 2, HOT, 100), SATURATION_UNCHANGED);
    assert_int_equal(saturation_note(&s, NAN, 100), SATURATION_UNCHANGED);
    assert_int_equal(s.hot_beats, 0);
    assert_int_equal(beats(&s, 2, HOT, 100), SATURATION_UNCHANGED);
    assert_false(s.saturated);
    assert_int_equal(saturation_note(&s, HOT, 100), SATURATION_SHED);
    assert_int_equal(s.effective_capacity, 90);

    assert_int_equal(beats(&s, 2, COOL, 90), SATURATION_UNCHANGED);
    assert_int_equal(saturation_note(&s, NAN, 90), SATURATION_UNCHANGED);
    assert_int_equal(s.cool_beats, 0);
    assert_int_equal(beats(&s, 2, COOL, 90), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 90);

    assert_int_equal(beats(&s, 50, NAN, 1000), SATURATION_UNCHANGED);
    assert_int_equal(beats(&s, 50, -NAN, 0), SATURATION_UNCHANGED);
    assert_true(s.saturated);
    assert_int_equal(s.effective_capacity, 90);
    assert_int_equal(s.hot_beats, 0);
    assert_int_equal(s.cool_beats, 0);
}

/* A worker announcing no capacity: saturating it takes nothing (there is
 * nothing to take) but still reports SHED once; recovering gives back its
 * 0 users and reports RECOVERED. */
static void test_capacity_zero(void **state)
{
    (void)state;
    saturation_t s = saturation_start(0);
    assert_int_equal(s.effective_capacity, 0);
    assert_int_equal(beats(&s, 3, HOT, 10), SATURATION_SHED);
    assert_true(s.saturated);
    assert_int_equal(s.effective_capacity, 0);
    assert_int_equal(beats(&s, 3, HOT, 10), SATURATION_UNCHANGED);
    assert_int_equal(s.effective_capacity, 0);
    assert_int_equal(beats(&s, 3, COOL, 0), SATURATION_RECOVERED);
    assert_false(s.saturated);
    assert_int_equal(s.effective_capacity, 0);
    assert_int_equal(beats(&s, 3, COOL, 0), SATURATION_UNCHANGED);
}

/* 10,000 heartbeats over workers of random capacity, CPU in phases (hot,
 * cool, warm, NaN) so that every kind of change happens; after each one the
 * change agrees with the state and effective <= capacity. */
static void test_random_invariants(void **state)
{
    (void)state;
    srand(20240611);
    saturation_t s = saturation_start(1000);
    double cpu = COOL;
    int seen[4] = {0};
    for (int i = 0; i < 10000; i++) {
        if (i % 500 == 0)
            s = saturation_start((uint32_t)(rand() % 5001));
        if (rand() % 6 == 0) { /* a new phase */
            int phase = rand() % 10;
            cpu = phase < 4   ? 90.5 + rand() % 10 /* hot */
                  : phase < 8 ? rand() % 75        /* cool */
                  : phase < 9 ? 76 + rand() % 14   /* warm */
                              : NAN;
        }
        uint64_t users = (uint64_t)(rand() % (2 * (int)s.capacity + 2));
        saturation_t before = s;
        saturation_change_t change = saturation_note(&s, cpu, users);
        assert_true(change >= SATURATION_UNCHANGED && change <= SATURATION_RECOVERED);
        seen[change]++;
        assert_int_equal(s.capacity, before.capacity);
        assert_true(s.effective_capacity <= s.capacity);
        assert_true(s.hot_beats < SATURATION_BEATS);
        if (!s.saturated)
            assert_int_equal(s.effective_capacity, s.capacity);
        switch (change) {
        case SATURATION_UNCHANGED:
            assert_int_equal(s.effective_capacity, before.effective_capacity);
            assert_int_equal(s.saturated, before.saturated);
            break;
        case SATURATION_SHED:
            assert_true(cpu > SATURATION_CPU);
            assert_true(s.saturated);
            assert_true(s.effective_capacity <= before.effective_capacity);
            assert_true(s.effective_capacity >= (users * 9 / 10 < before.effective_capacity
                                                     ? users * 9 / 10
                                                     : before.effective_capacity));
            break;
        case SATURATION_RECOVERING:
            assert_true(cpu < RECOVERY_CPU);
            assert_true(before.saturated && s.saturated);
            assert_true(s.effective_capacity > before.effective_capacity);
            assert_true(s.effective_capacity < s.capacity);
            break;
        case SATURATION_RECOVERED:
            assert_true(cpu < RECOVERY_CPU);
            assert_true(before.saturated);
            assert_false(s.saturated);
            assert_int_equal(s.effective_capacity, s.capacity);
            break;
        }
    }
    for (int c = 0; c < 4; c++)
        assert_true(seen[c] > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start),
        cmocka_unit_test(test_three_hot_beats_saturate_two_do_not),
        cmocka_unit_test(test_exactly_90_is_not_hot),
        cmocka_unit_test(test_cool_beat_in_between_resets_count),
        cmocka_unit_test(test_more_hot_beats_shed_more_never_raise),
        cmocka_unit_test(test_saturated_at_full_capacity),
        cmocka_unit_test(test_recovery_in_steps),
        cmocka_unit_test(test_small_capacity_recovers_at_once),
        cmocka_unit_test(test_hot_beat_interrupts_recovery),
        cmocka_unit_test(test_between_75_and_90_nothing_changes),
        cmocka_unit_test(test_nan_changes_nothing_and_resets_counters),
        cmocka_unit_test(test_capacity_zero),
        cmocka_unit_test(test_random_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
