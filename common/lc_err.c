/* lc_err.c — descriptions of lc_err.h codes, and the one error-message writer. */
#include "lc_err.h"

#include <stdio.h>
#include <string.h>

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

int lc_verrf(char *errmsg, size_t len, int code, const char *fmt, va_list ap)
{
    if (errmsg != NULL && len > 0)
        vsnprintf(errmsg, len, fmt, ap);
    return code;
}

int lc_errf(char *errmsg, size_t len, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lc_verrf(errmsg, len, code, fmt, ap);
    va_end(ap);
    return code;
}

int lc_err_wrap(char *errmsg, size_t len, int code, const char *fmt, ...)
{
    if (errmsg == NULL || len == 0)
        return code;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return code;
    size_t head = (size_t)n + 2; /* the prefix and ": " */
    size_t room = len - 1;       /* characters that fit before the NUL */
    size_t keep = head < room ? room - head : 0;
    size_t old = strnlen(errmsg, room);
    if (keep > old)
        keep = old;
    /* Moved first: the prefix is written over where the old text began. */
    if (keep > 0)
        memmove(errmsg + head, errmsg, keep);
    va_start(ap, fmt);
    vsnprintf(errmsg, len, fmt, ap);
    va_end(ap);
    for (size_t i = (size_t)n; i < head && i < room; i++)
        errmsg[i] = ": "[i - (size_t)n];
    errmsg[head + keep < room ? head + keep : room] = '\0';
    return code;
}
