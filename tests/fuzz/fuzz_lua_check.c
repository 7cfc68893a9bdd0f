/* fuzz_lua_check.c — lc_lua_check (the master's check of a run's script) on arbitrary text,
 * under the sandbox's deadline and memory cap. The first byte's low bit splits the rest at the
 * first '\001' into the script and a module "m" it may require. Properties: the check returns
 * (the limits bound its time and memory; libFuzzer's -timeout catches a hang), its code is one
 * the header names, a failure says what with a "script" message, and the same input gives the
 * same verdict twice (nothing leaks from one check into the next). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "lc_lua_check.h"

static int run_check(const char *script, size_t len, const lc_lua_module_t *mod, size_t n_mod,
                     char *err, size_t errlen)
{
    static const lc_lua_fn_ref_t fns[] = {{"journeys[0].steps[0].lua", "f"}};
    err[0] = '\0';
    return lc_lua_check(script, len, mod, n_mod, fns, 1, err, errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *text = fuzz_strndup(data + 1, size - 1);
    if (text == NULL)
        abort();
    size_t len = size - 1, n_mod = 0;
    lc_lua_module_t mod = {"m", "", 0};
    char *split = (data[0] & 1) ? memchr(text, '\001', len) : NULL;
    if (split != NULL) {
        mod.src = split + 1;
        mod.len = len - (size_t)(split + 1 - text);
        len = (size_t)(split - text);
        n_mod = 1;
    }
    char err[512], again[512];
    int rv = run_check(text, len, &mod, n_mod, err, sizeof err);
    FUZZ_CHECK(rv == 0 || rv == LC_EINVAL || rv == LC_ETOOBIG || rv == LC_ENOMEM,
               "lc_lua_check returned %d (%s)", rv, err);
    FUZZ_CHECK(rv == 0 || strncmp(err, "script", 6) == 0, "error \"%s\" does not say script", err);
    /* A deadline can fall on either side of a borderline script; the rest must repeat. */
    if (rv != LC_ETOOBIG) {
        int rv2 = run_check(text, len, &mod, n_mod, again, sizeof again);
        FUZZ_CHECK(rv2 == rv || rv2 == LC_ETOOBIG, "verdict %d then %d (%s, then %s)", rv, rv2,
                   err, again);
    }
    free(text);
    return 0;
}
