/* lc_err.h — the error codes every module returns, and their descriptions. */
#ifndef LC_ERR_H
#define LC_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* 0 is success; functions return one of these otherwise. Details go into an
 * errmsg buffer owned by the caller or the long-lived object. */
enum {
    LC_OK = 0,
    LC_ENOMEM,     /* out of memory */
    LC_EINVAL,     /* invalid argument or input */
    LC_EPROTO,     /* malformed frame or protocol violation */
    LC_EIO,        /* I/O error */
    LC_ENOTFOUND,  /* no such object */
    LC_ETOOBIG,    /* input exceeds a limit */
    LC_ESTATE,     /* operation not allowed in the current state */
    LC_ENOTLEADER, /* this master is not the leader */
    LC_ECLOSED,    /* peer or object closed */
    LC_EAGAIN,     /* not ready yet; try again */
    LC_ERR_COUNT
};

/* Static description of an error code; never NULL. */
const char *lc_strerror(int code);

/* Writes the formatted message into errmsg (when errmsg != NULL and len > 0,
 * truncating to fit) and returns code, so a failure reads
 * `return lc_errf(errmsg, errlen, LC_EINVAL, "%s: no nodes", path);`. */
int lc_errf(char *errmsg, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int lc_verrf(char *errmsg, size_t len, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* Prefixes the message already in errmsg with the formatted text and ": "
 * ("open x.db: " + "disk full"), truncating the end to fit, and returns code.
 * The arguments must not point into errmsg. */
int lc_err_wrap(char *errmsg, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
