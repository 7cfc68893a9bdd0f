/* lc_err.c — descriptions of lc_err.h codes. */
#include "lc_err.h"

static const char *const descriptions[LC_ERR_COUNT] = {
    [LC_OK] = "success",
    [LC_ENOMEM] = "out of memory",
    [LC_EINVAL] = "invalid input",
    [LC_EPROTO] = "protocol error",
    [LC_EIO] = "I/O error",
    [LC_ENOTFOUND] = "not found",
    [LC_ETOOBIG] = "too big",
    [LC_ESTATE] = "not allowed in the current state",
    [LC_ENOTLEADER] = "not the leader",
    [LC_ECLOSED] = "closed",
    [LC_EAGAIN] = "try again",
};

const char *lc_strerror(int code)
{
    if (code < 0 || code >= LC_ERR_COUNT)
        return "unknown error";
    return descriptions[code];
}
