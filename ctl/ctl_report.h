/* ctl_report.h — `loadctl report ID`: a run's report in one format, byte for byte as the API serves it, to stdout or a file. */
#ifndef CTL_REPORT_H
#define CTL_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* The formats, for messages: "json, csv, html, junit, history-csv". */
extern const char ctl_report_formats[];

/* The API path of run id's report in format into path; false when format is
 * none of ctl_report_formats. */
bool ctl_report_path(const char *format, const char *id, char *path, size_t len);

/* Writes body to stdout (file NULL or "-"), or to file through a temporary
 * file renamed over it, so a failed download never leaves half a report.
 * Returns 0, or -1 with errno set. */
int ctl_report_write(const char *file, const char *body, size_t len);

#endif
