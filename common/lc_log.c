/* lc_log.c — logfmt lines on stderr, whatever the values hold: one event, one line. */
#include "lc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "lc_err.h"

/* Longer lines are cut (an escaped value takes up to four times its bytes). */
#define LINE_MAX_LEN 4096u

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

/* A line being written: cap bytes at most, the newline excluded. */
typedef struct line_s {
    char buf[LINE_MAX_LEN + 1];
    size_t len;
} line_t;

static void put(line_t *l, const char *s, size_t n)
{
    if (n > LINE_MAX_LEN - l->len)
        n = LINE_MAX_LEN - l->len;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

/* Writes s[0..n) so that it can neither end the line (control bytes become
 * \n, \r, \t or \xNN) nor, inside a quoted value, end the value (" and \ get
 * a backslash). Clean text is written as it is. */
static void put_escaped(line_t *l, const char *s, size_t n, bool quoted)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[4] = {'\\', (char)c, 0, 0};
        size_t len = 2;
        if (c == '\n' || c == '\r' || c == '\t') {
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20 || c == 0x7f) {
            esc[1] = 'x';
            esc[2] = hex[c >> 4];
            esc[3] = hex[c & 15];
            len = 4;
        } else if (!quoted || (c != '"' && c != '\\')) {
            esc[0] = (char)c;
            len = 1;
        }
        put(l, esc, len);
    }
}

/* Formats one conversion (spec is its text, '*' resolved) with the next
 * argument into out; returns the length, or -1 for a conversion lc_logf does
 * not take (%n). */
static int format_one(char *out, size_t cap, const char *spec, const char *length, char conv,
                      va_list *ap)
{
    bool l = strcmp(length, "l") == 0, ll = strcmp(length, "ll") == 0;
    bool z = strcmp(length, "z") == 0, j = strcmp(length, "j") == 0;
    bool t = strcmp(length, "t") == 0;
    switch (conv) {
    case 'd': case 'i':
        if (l) return snprintf(out, cap, spec, va_arg(*ap, long));
        if (ll) return snprintf(out, cap, spec, va_arg(*ap, long long));
        if (z) return snprintf(out, cap, spec, va_arg(*ap, ssize_t));
        if (j) return snprintf(out, cap, spec, va_arg(*ap, intmax_t));
        if (t) return snprintf(out, cap, spec, va_arg(*ap, ptrdiff_t));
        return snprintf(out, cap, spec, va_arg(*ap, int));
    case 'u': case 'o': case 'x': case 'X':
        if (l) return snprintf(out, cap, spec, va_arg(*ap, unsigned long));
        if (ll) return snprintf(out, cap, spec, va_arg(*ap, unsigned long long));
        if (z) return snprintf(out, cap, spec, va_arg(*ap, size_t));
        if (j) return snprintf(out, cap, spec, va_arg(*ap, uintmax_t));
        if (t) return snprintf(out, cap, spec, va_arg(*ap, ptrdiff_t));
        return snprintf(out, cap, spec, va_arg(*ap, unsigned));
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        if (strcmp(length, "L") == 0)
            return snprintf(out, cap, spec, va_arg(*ap, long double));
        return snprintf(out, cap, spec, va_arg(*ap, double));
    case 'c': return snprintf(out, cap, spec, va_arg(*ap, int));
    case 's': return snprintf(out, cap, spec, va_arg(*ap, const char *));
    case 'p': return snprintf(out, cap, spec, va_arg(*ap, void *));
    default: return -1;
    }
}

/* Reads the conversion at *f ('%' already consumed) into spec, taking '*'
 * widths and precisions from ap; returns the conversion character. */
static char parse_spec(const char **f, char *spec, size_t cap, char *length, va_list *ap)
{
    const char *s = *f;
    size_t n = 0, k = 0;
    spec[n++] = '%';
    while (*s != '\0' && n + 24 < cap) {
        if (*s == '*') {
            int v = va_arg(*ap, int);
            bool precision = n > 0 && spec[n - 1] == '.';
            if (precision && v < 0)
                n--; /* a negative precision is none */
            else
                n += (size_t)snprintf(spec + n, cap - n, "%d", v);
        } else if (strchr("-+ #0123456789.", *s) != NULL) {
            spec[n++] = *s;
        } else {
            break;
        }
        s++;
    }
    while (*s != '\0' && strchr("hlzjtL", *s) != NULL && k < 2)
        length[k++] = spec[n++] = *s++;
    length[k] = '\0';
    char conv = *s;
    if (conv != '\0')
        spec[n++] = *s++;
    spec[n] = '\0';
    *f = s;
    return conv;
}

/* printf into l, every piece escaped: the format's own text for control
 * bytes, each argument also for quotes when the format put it between them. */
static void format_line(line_t *l, const char *fmt, va_list *ap)
{
    bool quoted = false;
    char spec[48], length[3], piece[LINE_MAX_LEN + 1];
    for (const char *f = fmt; *f != '\0';) {
        if (*f != '%') {
            quoted ^= *f == '"';
            put_escaped(l, f++, 1, false);
            continue;
        }
        f++;
        if (*f == '%') {
            put(l, f++, 1);
            continue;
        }
        char conv = parse_spec(&f, spec, sizeof spec, length, ap);
        int n = conv == 's' && strcmp(spec, "%s") == 0 ? -2
                                                       : format_one(piece, sizeof piece, spec,
                                                                    length, conv, ap);
        if (n == -2) { /* the common case: no copy, no length bound but the line's */
            const char *arg = va_arg(*ap, const char *);
            arg = arg != NULL ? arg : "(null)";
            put_escaped(l, arg, strlen(arg), quoted);
        } else if (n >= 0) {
            put_escaped(l, piece, (size_t)n < sizeof piece ? (size_t)n : sizeof piece - 1, quoted);
        }
    }
}

void lc_logf(enum lc_log_level level, const char *module, const char *fmt, ...)
{
    if (level < min_level)
        return;
    line_t line;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line.buf, sizeof line.buf,
                     "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s module=",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, level_names[level]);
    line.len = n > 0 ? (size_t)n : 0;
    put_escaped(&line, module, strlen(module), false);
    put(&line, " ", 1);
    va_list ap;
    va_start(ap, fmt);
    format_line(&line, fmt, &ap);
    va_end(ap);
    /* One write per line so lines from several threads never interleave. */
    line.buf[line.len++] = '\n';
    fwrite(line.buf, 1, line.len, stderr);
}
