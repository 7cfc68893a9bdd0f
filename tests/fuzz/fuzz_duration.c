/* fuzz_duration.c — lc_duration_parse on arbitrary text; property: the same
 * text parses the same way twice, and a number of seconds printed back
 * parses to the same milliseconds. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "lc_scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (text == NULL)
        abort();
    uint64_t ms = 0, again = 0;
    int rv = lc_duration_parse(text, &ms);
    FUZZ_CHECK(lc_duration_parse(text, &again) == rv && (rv != 0 || again == ms),
               "parsing is not deterministic");
    if (rv == 0 && ms % 1000 == 0) {
        char secs[32];
        snprintf(secs, sizeof secs, "%" PRIu64 "s", ms / 1000);
        FUZZ_CHECK(lc_duration_parse(secs, &again) == 0 && again == ms,
                   "\"%s\" (from %" PRIu64 " ms) does not parse back", secs, ms);
    }
    free(text);
    return 0;
}
