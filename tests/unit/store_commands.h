/* store_commands.h — for unit tests of the store: open an empty store and
 * apply the CreateRun and RunState commands the tests build runs from. */
#ifndef TESTS_UNIT_STORE_COMMANDS_H
#define TESTS_UNIT_STORE_COMMANDS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "state.pb-c.h"
#include "store.h"

static inline store_t *test_store_open(void)
{
    store_t *s;
    char err[256];
    assert_int_equal(store_open(&s, err, sizeof err), 0);
    return s;
}

/* Applies CreateRun for tenant "default"; returns store_apply's code. */
static inline int test_store_create_run(store_t *s, uint64_t id, const char *name,
                                        const char *scenario_json, uint32_t users,
                                        uint64_t created_ms)
{
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = id;
    cr.tenant = "default";
    cr.name = (char *)name;
    cr.scenario_json = (char *)scenario_json;
    cr.users = users;
    cr.created_ms = created_ms;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
    cmd.create_run = &cr;
    return store_apply(s, &cmd);
}

/* Applies RunState; returns store_apply's code. */
static inline int test_store_set_state(store_t *s, uint64_t id, const char *state, uint64_t at,
                                       const char *reason)
{
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = id;
    rs.state = (char *)state;
    rs.at_ms = at;
    rs.reason = (char *)reason;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    return store_apply(s, &cmd);
}

#endif
