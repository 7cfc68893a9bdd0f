/* fuzz_yaml_json.c — lc_yaml_to_json on arbitrary bytes. Properties: a
 * success is a value jansson can write and read back as the same value; a
 * refusal leaves no value and says where ("(line L, column C)") unless it is
 * the size limit; the same bytes give the same answer twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "yaml_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *out = NULL, *again = NULL;
    char err[512] = "", err2[512] = "";
    int rv = lc_yaml_to_json((const char *)data, size, &out, err, sizeof err);
    int rv2 = lc_yaml_to_json((const char *)data, size, &again, err2, sizeof err2);
    FUZZ_CHECK(rv == rv2 && strcmp(err, err2) == 0, "not deterministic: %s / %s", err, err2);
    if (rv != 0) {
        FUZZ_CHECK(out == NULL && again == NULL, "a refusal left a value");
        FUZZ_CHECK(rv == LC_ENOMEM || strstr(err, " (line ") != NULL ||
                       strncmp(err, "scenario: larger than", 21) == 0,
                   "a refusal without its position: %s", err);
        return 0;
    }
    char *text = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
    FUZZ_CHECK(text != NULL, "jansson cannot write the value");
    json_t *back = json_loads(text, JSON_DECODE_ANY, NULL);
    FUZZ_CHECK(back != NULL && json_equal(back, out) && json_equal(out, again),
               "the value does not read back: %s", text);
    json_decref(back);
    free(text);
    json_decref(out);
    json_decref(again);
    return 0;
}
