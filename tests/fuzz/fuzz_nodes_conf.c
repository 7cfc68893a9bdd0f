/* fuzz_nodes_conf.c — nodes.conf parsing from a buffer (lc_nodes_conf_parse
 * takes the text; no file needed); property: an accepted configuration has
 * 1..LC_NODES_MAX nodes with distinct ids, each found again by id. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "lc_nodes_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (text == NULL)
        abort();
    lc_nodes_conf_t *c = calloc(1, sizeof *c);
    char err[256];
    if (c == NULL)
        abort();
    if (lc_nodes_conf_parse(text, "nodes.conf", c, err, sizeof err) == 0) {
        FUZZ_CHECK(c->n >= 1 && c->n <= LC_NODES_MAX, "%zu nodes accepted", c->n);
        for (size_t i = 0; i < c->n; i++) {
            FUZZ_CHECK(lc_nodes_conf_find(c, c->nodes[i].id) == &c->nodes[i],
                       "node %llu not found by its id", (unsigned long long)c->nodes[i].id);
            char buf[LC_HOST_MAX + 8];
            lc_hostport_format(&c->nodes[i].raft, buf, sizeof buf);
        }
    } else {
        FUZZ_CHECK(err[0] != '\0', "rejected without a message");
    }
    free(c);
    free(text);
    return 0;
}
