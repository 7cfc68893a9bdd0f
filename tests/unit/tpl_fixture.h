/* tpl_fixture.h — the variables, name resolver and rendering environment that test_lc_tpl and
 * test_lc_cond share: one slot a variable, values chosen to be awkward. */
#ifndef TESTS_UNIT_TPL_FIXTURE_H
#define TESTS_UNIT_TPL_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lc_tpl.h"
#include "lc_value.h"

enum {
    SLOT_TOKEN,   /* abc123 */
    SLOT_COUNT,   /* 3, a JSON number */
    SLOT_ACCOUNT, /* accounts.name */
    SLOT_UNSET,   /* never set */
    SLOT_QUOTE,   /* quotes, a backslash and a slash */
    SLOT_CTRL,    /* control characters and DEL */
    SLOT_UTF8,    /* valid two-, three- and four-byte UTF-8 */
    SLOT_BADUTF8, /* a stray 0xff and a cut sequence */
    SLOT_CRLF,
    SLOT_FORMISH, /* every character form and url encoding treat apart */
    SLOT_FLAG,    /* true, a JSON boolean */
    SLOT_OFF,     /* false, a JSON boolean */
    SLOT_NOTHING, /* null */
    SLOT_OBJ,     /* JSON text */
    SLOT_EMPTY,   /* "" */
    SLOT_ZERO,    /* 0, a JSON number */
    SLOT_ZEROSTR, /* "0", a string */
    SLOT_BIG,     /* a 20-digit id, as a string */
    SLOT_NUL,     /* a\0b */
    SLOT_X,       /* whatever a test puts there */
    SLOT_LONGEST, /* a variable whose name has the most characters allowed */
    SLOT_COUNT_OF_SLOTS
};

typedef struct fixture_var_s {
    const char *name;
    const char *data;
    size_t len;
    uint8_t type; /* enum lc_vtype */
    bool set;
} fixture_var_t;

#define FIXTURE_VAR(n, text, t) {n, text, sizeof text - 1, t, true}
#define FIXTURE_LONGEST_NAME "a123456789b123456789c123456789d123456789e123456789f123456789g123"

static fixture_var_t fixture_vars[SLOT_COUNT_OF_SLOTS] = {
    [SLOT_TOKEN] = FIXTURE_VAR("token", "abc123", LC_V_STRING),
    [SLOT_COUNT] = FIXTURE_VAR("count", "3", LC_V_NUMBER),
    [SLOT_ACCOUNT] = FIXTURE_VAR("accounts.name", "alice", LC_V_STRING),
    [SLOT_UNSET] = {"unset", NULL, 0, LC_V_STRING, false},
    [SLOT_QUOTE] = FIXTURE_VAR("quote", "say \"hi\" \\ /", LC_V_STRING),
    [SLOT_CTRL] = FIXTURE_VAR("ctrl", "a\tb\nc\r\b\f\x01\x1f\x7f", LC_V_STRING),
    [SLOT_UTF8] = FIXTURE_VAR("utf8", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", LC_V_STRING),
    [SLOT_BADUTF8] = FIXTURE_VAR("badutf8", "x\xff\xc3(", LC_V_STRING),
    [SLOT_CRLF] = FIXTURE_VAR("crlf", "a\r\nX-Evil: 1", LC_V_STRING),
    [SLOT_FORMISH] = FIXTURE_VAR("formish", "a b&c=d+e~f*g.h-i_j/k", LC_V_STRING),
    [SLOT_FLAG] = FIXTURE_VAR("flag", "true", LC_V_BOOL),
    [SLOT_OFF] = FIXTURE_VAR("off", "false", LC_V_BOOL),
    [SLOT_NOTHING] = FIXTURE_VAR("nothing", "null", LC_V_NULL),
    [SLOT_OBJ] = FIXTURE_VAR("obj", "{\"a\":[1,2]}", LC_V_JSON),
    [SLOT_EMPTY] = FIXTURE_VAR("empty", "", LC_V_STRING),
    [SLOT_ZERO] = FIXTURE_VAR("zero", "0", LC_V_NUMBER),
    [SLOT_ZEROSTR] = FIXTURE_VAR("zerostr", "0", LC_V_STRING),
    [SLOT_BIG] = FIXTURE_VAR("big", "12345678901234567890", LC_V_STRING),
    [SLOT_NUL] = FIXTURE_VAR("nul", "a\0b", LC_V_STRING),
    [SLOT_X] = FIXTURE_VAR("x", "", LC_V_STRING),
    [SLOT_LONGEST] = FIXTURE_VAR(FIXTURE_LONGEST_NAME, "long", LC_V_STRING),
};

/* Puts a value into SLOT_X. */
static inline void fixture_set_x(const char *data, size_t len, uint8_t type)
{
    fixture_vars[SLOT_X] = (fixture_var_t){"x", data, len, type, true};
}

static inline int fixture_resolve(void *ctx, const char *name, size_t len)
{
    for (int i = 0; i < SLOT_COUNT_OF_SLOTS; i++)
        if (strlen(fixture_vars[i].name) == len && memcmp(fixture_vars[i].name, name, len) == 0)
            return i;
    return -1;
}

static inline bool fixture_get(void *ctx, int slot, lc_value_t *out)
{
    if (slot < 0 || slot >= SLOT_COUNT_OF_SLOTS || !fixture_vars[slot].set)
        return false;
    *out = (lc_value_t){fixture_vars[slot].data, fixture_vars[slot].len, fixture_vars[slot].type};
    return true;
}

static const lc_tpl_names_t fixture_names = {fixture_resolve, NULL};

/* user_id 42, iteration 7, now_ms 1700000000123; rng and missing belong to the test. */
static inline lc_tpl_env_t fixture_env(uint64_t *rng, const char **missing)
{
    return (lc_tpl_env_t){.get = fixture_get, .user_id = 42, .iteration = 7,
                          .now_ms = 1700000000123ULL, .rng = rng, .missing = missing};
}

#endif
