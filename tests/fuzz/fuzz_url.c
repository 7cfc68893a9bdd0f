/* fuzz_url.c — lc_url_parse and lc_hostport_parse on arbitrary text;
 * property: an accepted address formats into text that parses to the same
 * host and port, and a base path never ends with '/'. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_addr.h"

static void check_hostport(const lc_hostport_t *hp)
{
    char text[LC_HOST_MAX + 8], err[160];
    lc_hostport_t back;
    lc_hostport_format(hp, text, sizeof text);
    if (strlen(text) + 1 >= sizeof text)
        return; /* truncated: nothing to compare */
    int rv = lc_hostport_parse(text, 0, &back, err, sizeof err);
    if (fuzz_ignored("hostport-roundtrip"))
        return;
    FUZZ_CHECK(rv == 0, "\"%s\" formatted from an accepted address does not parse: %s", text, err);
    FUZZ_CHECK(strcmp(back.host, hp->host) == 0 && back.port == hp->port,
               "\"%s\" parses back to %s:%u", text, back.host, back.port);
    lc_addr_is_ip_literal(hp->host);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* First byte: the default port for a bare host (0: none allowed). */
    uint16_t default_port = data[0] & 1 ? 0 : (uint16_t)(data[0] * 37u);
    char *text = fuzz_strndup(data + 1, size - 1);
    if (text == NULL)
        abort();
    char err[160];
    lc_url_t *url = calloc(1, sizeof *url);
    lc_hostport_t hp;
    if (url == NULL)
        abort();
    if (lc_url_parse(text, url, err, sizeof err) == 0) {
        size_t n = strlen(url->base_path);
        FUZZ_CHECK(n == 0 || url->base_path[n - 1] != '/', "base path \"%s\" ends with '/'",
                   url->base_path);
        check_hostport(&url->hp);
    }
    if (lc_hostport_parse(text, default_port, &hp, err, sizeof err) == 0)
        check_hostport(&hp);
    free(url);
    free(text);
    return 0;
}
