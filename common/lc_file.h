/* lc_file.h — reads a whole small file (a config, a secret, a scenario) into memory, with a size cap. */
#ifndef LC_FILE_H
#define LC_FILE_H

#include <stddef.h>

/* Reads path into *out (OUT: malloc'd, NUL-terminated after *len bytes; the
 * caller frees it) unless it holds more than max bytes. Returns 0, LC_EIO
 * ("<path>: <strerror>" when it cannot be opened, "<path>: read error", e.g.
 * for a directory), LC_ETOOBIG ("<path>: larger than 65536 bytes", or
 * "… 64 MiB" when max is whole MiB) or LC_ENOMEM ("<path>: out of memory");
 * *out is NULL then. */
int lc_file_read(const char *path, size_t max, char **out, size_t *len, char *errmsg,
                 size_t errlen);

#endif
