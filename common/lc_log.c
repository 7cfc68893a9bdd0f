/* lc_log.c — logfmt lines on stderr. */
#include "lc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lc_err.h"

static enum lc_log_level min_level = LC_LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void lc_log_set_level(enum lc_log_level level)
{
    min_level = level;
}

int lc_log_level_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

int lc_log_open_file(const char *path, char *errmsg, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return lc_errf(errmsg, errlen, LC_EIO, "open %s: %s", path, strerror(errno));
    int rv = 0;
    if (fd != STDERR_FILENO && dup2(fd, STDERR_FILENO) < 0)
        rv = lc_errf(errmsg, errlen, LC_EIO, "dup2 %s onto stderr: %s", path, strerror(errno));
    if (fd != STDERR_FILENO)
        close(fd);
    return rv;
}

void lc_logf(enum lc_log_level level, const char *module, const char *fmt, ...)
{
    if (level < min_level)
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line,
                     "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s module=%s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, level_names[level], module);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    /* One write per line so lines from several threads never interleave. */
    size_t len = strlen(line);
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
}
