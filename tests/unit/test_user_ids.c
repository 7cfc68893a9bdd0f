/* test_user_ids.c — worker/user_ids.c: an engine's ${user_id}s stay in its part of the share,
 * are taken in turn, a freed one is handed out again, and a rescale or a new share never hands
 * out an id a running user still holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "user_ids.h"

static uint64_t take(worker_user_ids_t *ids)
{
    uint64_t id = 0;
    assert_true(worker_user_ids_take(ids, &id));
    return id;
}

static void assert_full(worker_user_ids_t *ids)
{
    uint64_t id;
    assert_false(worker_user_ids_take(ids, &id));
}

/* Engine 1 of 2 with 2 of the share's 4 users (base 100): ids 102 and 104, then none; a freed
 * id comes back first (a ramp down and up again). */
static void test_range_and_reuse(void **state)
{
    worker_user_ids_t ids;
    worker_user_ids_init(&ids, 1, 2);
    assert_int_equal(worker_user_ids_share(&ids, 100, 2), 0);
    assert_int_equal(take(&ids), 102);
    assert_int_equal(take(&ids), 104);
    assert_full(&ids);
    worker_user_ids_give(&ids, 102);
    worker_user_ids_give(&ids, 103); /* engine 0's: ignored */
    worker_user_ids_give(&ids, 999); /* past the share: ignored */
    assert_int_equal(take(&ids), 102);
    assert_full(&ids);
    worker_user_ids_free(&ids);
}

/* Down to 1 slot while both users still run, then up to 2 again (the running users' ids held
 * anew, as the engine does): nothing is handed out twice. */
static void test_rescale_keeps_running_users_ids(void **state)
{
    worker_user_ids_t ids;
    worker_user_ids_init(&ids, 0, 1);
    assert_int_equal(worker_user_ids_share(&ids, 0, 2), 0);
    assert_int_equal(take(&ids), 1);
    assert_int_equal(take(&ids), 2);
    assert_int_equal(worker_user_ids_share(&ids, 0, 1), 0);
    worker_user_ids_hold(&ids, 1);
    worker_user_ids_hold(&ids, 2);
    assert_full(&ids);
    worker_user_ids_give(&ids, 1); /* the first user ends; the second (id 2) still retires */
    assert_int_equal(take(&ids), 1);
    assert_int_equal(worker_user_ids_share(&ids, 0, 2), 0);
    worker_user_ids_hold(&ids, 1);
    worker_user_ids_hold(&ids, 2);
    assert_full(&ids); /* id 2 is still the retiring user's */
    worker_user_ids_give(&ids, 2);
    assert_int_equal(take(&ids), 2);
    worker_user_ids_free(&ids);
}

/* A new share numbers afresh from its base, except ids users from the old one still hold. */
static void test_new_share(void **state)
{
    worker_user_ids_t ids;
    worker_user_ids_init(&ids, 1, 2);
    assert_int_equal(worker_user_ids_share(&ids, 100, 3), 0);
    assert_int_equal(take(&ids), 102);
    assert_int_equal(worker_user_ids_share(&ids, 98, 3), 0); /* 100, 102, 104 */
    worker_user_ids_hold(&ids, 102);
    assert_int_equal(take(&ids), 100);
    assert_int_equal(take(&ids), 104);
    assert_full(&ids);
    worker_user_ids_give(&ids, 102);
    assert_int_equal(take(&ids), 102);
    worker_user_ids_free(&ids);
}

/* Users that each end before the next starts (a journey's "exit": "user") still get the
 * share's ids in turn, then the first again: the journey mix follows the ids. */
static void test_in_turn(void **state)
{
    worker_user_ids_t ids;
    worker_user_ids_init(&ids, 0, 1);
    assert_int_equal(worker_user_ids_share(&ids, 0, 4), 0);
    for (uint64_t round = 0; round < 2; round++)
        for (uint64_t want = 1; want <= 4; want++) {
            uint64_t id = take(&ids);
            assert_int_equal(id, want);
            worker_user_ids_give(&ids, id);
        }
    worker_user_ids_free(&ids);
}

/* Many slots: past one bitmap word, the free ones are found in turn, wrapping around. */
static void test_many(void **state)
{
    worker_user_ids_t ids;
    worker_user_ids_init(&ids, 0, 1);
    assert_int_equal(worker_user_ids_share(&ids, 1000, 200), 0);
    for (uint64_t i = 1; i <= 200; i++)
        assert_int_equal(take(&ids), 1000 + i);
    assert_full(&ids);
    worker_user_ids_give(&ids, 1150);
    worker_user_ids_give(&ids, 1070);
    assert_int_equal(take(&ids), 1070);
    assert_int_equal(take(&ids), 1150);
    assert_full(&ids);
    worker_user_ids_free(&ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_and_reuse),
        cmocka_unit_test(test_rescale_keeps_running_users_ids),
        cmocka_unit_test(test_new_share),
        cmocka_unit_test(test_in_turn),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
