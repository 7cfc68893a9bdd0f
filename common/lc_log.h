/* lc_log.h — one logfmt line per event on stderr, with levels; stderr may be
 * pointed at a file that SIGHUP reopens. */
#ifndef LC_LOG_H
#define LC_LOG_H

#include <stddef.h>

enum lc_log_level { LC_LOG_DEBUG, LC_LOG_INFO, LC_LOG_WARN, LC_LOG_ERROR };

/* Lines below this level are dropped. Set once at start (read-only after). */
void lc_log_set_level(enum lc_log_level level);
/* Parses "debug", "info", "warn" or "error"; returns -1 for anything else. */
int lc_log_level_parse(const char *name);

/* Points stderr at path (appending, created 0640), so that sanitizer reports
 * land there too; calling it again reopens the file after a rotation.
 * Returns 0, or LC_EIO with errmsg. */
int lc_log_open_file(const char *path, char *errmsg, size_t errlen);

/* Writes `ts=… level=… module=<module> ` followed by the formatted text, which
 * should itself be logfmt: msg="what happened" key=value …. Values may come
 * from the network: control bytes anywhere become \n, \r, \t or \xNN, and
 * in an argument the format puts between quotes (reason="%s") a " or \ gets
 * a backslash, so one call is always one line with the keys the format has.
 * Clean text is written unchanged. */
void lc_logf(enum lc_log_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define lc_debug(mod, ...) lc_logf(LC_LOG_DEBUG, mod, __VA_ARGS__)
#define lc_info(mod, ...) lc_logf(LC_LOG_INFO, mod, __VA_ARGS__)
#define lc_warn(mod, ...) lc_logf(LC_LOG_WARN, mod, __VA_ARGS__)
#define lc_error(mod, ...) lc_logf(LC_LOG_ERROR, mod, __VA_ARGS__)

#endif
