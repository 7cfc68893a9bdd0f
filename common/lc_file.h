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

/* The same for the file `name` (no '/') in the directory dirfd, for names
 * that come from outside: a symbolic link, a FIFO, a device or anything but
 * a regular file is refused without blocking (LC_EIO "<name>: Too many
 * levels of symbolic links", LC_EINVAL "<name>: not a regular file"), and
 * one larger than max before any byte is read. */
int lc_file_read_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                    char *errmsg, size_t errlen);

#endif
