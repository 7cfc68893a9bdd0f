/* lc_file.c — whole-file reads with a size cap. */
#include "lc_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lc_err.h"

#define FIRST_CHUNK (64u * 1024u)
#define MIB (1024u * 1024u)

/* Doubles buf's capacity, but never past max + 1: one byte over the cap is
 * how a file too large is seen. */
static int grow(char **buf, size_t *cap, size_t max)
{
    size_t want = *cap > max / 2 ? max + 1 : *cap * 2;
    char *p = realloc(*buf, want);
    if (p == NULL)
        return LC_ENOMEM;
    *buf = p;
    *cap = want;
    return 0;
}

static int too_big(const char *path, size_t max, char *errmsg, size_t errlen)
{
    if (max >= MIB && max % MIB == 0)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "%s: larger than %zu MiB", path, max / MIB);
    return lc_errf(errmsg, errlen, LC_ETOOBIG, "%s: larger than %zu bytes", path, max);
}

/* Reads f to its end into *out (NUL-terminated), refusing more than max bytes. */
static int read_stream(FILE *f, const char *path, size_t max, char **out, size_t *len,
                       char *errmsg, size_t errlen)
{
    size_t used = 0, cap = (max < FIRST_CHUNK ? max : FIRST_CHUNK) + 1;
    char *buf = malloc(cap);
    int rv = buf == NULL ? LC_ENOMEM : 0;
    while (rv == 0) {
        used += fread(buf + used, 1, cap - used, f);
        if (ferror(f))
            rv = lc_errf(errmsg, errlen, LC_EIO, "%s: read error", path);
        else if (used > max)
            rv = too_big(path, max, errmsg, errlen);
        else if (feof(f))
            break;
        else if (used == cap)
            rv = grow(&buf, &cap, max);
    }
    if (rv == LC_ENOMEM)
        lc_errf(errmsg, errlen, rv, "%s: out of memory", path);
    if (rv != 0) {
        free(buf);
        return rv;
    }
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return 0;
}

int lc_file_read(const char *path, size_t max, char **out, size_t *len, char *errmsg,
                 size_t errlen)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return lc_errf(errmsg, errlen, LC_EIO, "%s: %s", path, strerror(errno));
    int rv = read_stream(f, path, max, out, len, errmsg, errlen);
    fclose(f);
    return rv;
}

int lc_file_read_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                    char *errmsg, size_t errlen)
{
    struct stat st;
    *out = NULL;
    *len = 0;
    if (name[0] == '\0' || strchr(name, '/') != NULL)
        return lc_errf(errmsg, errlen, LC_EINVAL, "%s: not a plain file name", name);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return lc_errf(errmsg, errlen, LC_EIO, "%s: %s", name, strerror(errno));
    int rv = 0;
    if (fstat(fd, &st) != 0)
        rv = lc_errf(errmsg, errlen, LC_EIO, "%s: %s", name, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rv = lc_errf(errmsg, errlen, LC_EINVAL, "%s: not a regular file", name);
    else if ((uintmax_t)st.st_size > max)
        rv = too_big(name, max, errmsg, errlen);
    FILE *f = rv == 0 ? fdopen(fd, "rb") : NULL;
    if (rv == 0 && f == NULL)
        rv = lc_errf(errmsg, errlen, LC_ENOMEM, "%s: out of memory", name);
    if (f == NULL) {
        close(fd);
        return rv;
    }
    rv = read_stream(f, name, max, out, len, errmsg, errlen);
    fclose(f);
    return rv;
}
