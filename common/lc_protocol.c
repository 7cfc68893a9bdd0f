/* lc_protocol.c — the error kinds both sides of the protocol name (lc_protocol.h). */
#include "lc_protocol.h"

#include <string.h>

const char *const lc_protocol_error_kinds[LC_PROTOCOL_ERROR_KINDS] = {
    "connect_refused", "connect_timeout", "reset", "timeout", "tls",
    "parse",           "status",          "expect", "aborted",
    "extract",         "template",        "redirect",
    "script",          "check",
    "h2_refused",      "h2_reset",
};

bool lc_protocol_error_kind_known(const char *kind)
{
    for (size_t i = 0; i < LC_PROTOCOL_ERROR_KINDS; i++)
        if (strcmp(kind, lc_protocol_error_kinds[i]) == 0)
            return true;
    return false;
}
