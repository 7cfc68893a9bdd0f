/* ctl_report.c — the formats of `loadctl report` and writing a downloaded
 * report where it was asked for. */
#include "ctl_report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char ctl_report_formats[] = "json, csv, failures-csv, html, junit, history-csv";

typedef struct report_format_s {
    const char *name, *file; /* the format, and its name under /api/v1/runs/ID/ */
} report_format_t;

static const report_format_t formats[] = {
    {"json", "report.json"}, {"csv", "report.csv"},         {"html", "report.html"},
    {"junit", "report.junit.xml"}, {"history-csv", "history.csv"},
    {"failures-csv", "failures.csv"},
};

bool ctl_report_path(const char *format, const char *id, char *path, size_t len)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(format, formats[i].name) == 0) {
            int n = snprintf(path, len, "/api/v1/runs/%s/%s", id, formats[i].file);
            return n > 0 && (size_t)n < len;
        }
    return false;
}

static int write_all(FILE *f, const char *body, size_t len)
{
    if (len > 0 && fwrite(body, 1, len, f) != len)
        return -1;
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int ctl_report_write(const char *file, const char *body, size_t len)
{
    if (file == NULL || strcmp(file, "-") == 0)
        return write_all(stdout, body, len);
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (f == NULL)
        return -1;
    int rv = write_all(f, body, len);
    int saved = errno;
    if (fclose(f) != 0 && rv == 0) {
        rv = -1;
        saved = errno;
    }
    if (rv == 0 && rename(tmp, file) != 0) {
        rv = -1;
        saved = errno;
    }
    if (rv != 0)
        unlink(tmp);
    errno = saved;
    return rv;
}
