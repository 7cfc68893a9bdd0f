/* lc_buf.h — a growable byte buffer, kept NUL-terminated for text. */
#ifndef LC_BUF_H
#define LC_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* A zeroed lc_buf_t ({0}, or lc_buf_init) is an empty buffer. */
typedef struct lc_buf_s {
    char *data; /* NULL until the first append or reserve; then data[len] == '\0' */
    size_t len;
    size_t cap;
} lc_buf_t;

void lc_buf_init(lc_buf_t *b);
/* Frees the bytes; b is empty (and usable) again. */
void lc_buf_free(lc_buf_t *b);

/* Makes room for extra more bytes and the NUL. Returns 0 or LC_ENOMEM. */
int lc_buf_reserve(lc_buf_t *b, size_t extra);
/* lc_buf_append when the bytes do not fit: grows b first. */
int lc_buf_append_grow(lc_buf_t *b, const void *data, size_t len);

/* Appends len bytes. Returns 0 or LC_ENOMEM (b unchanged then). Inline when they fit: the
 * engine renders every request with a few dozen of these. */
static inline int lc_buf_append(lc_buf_t *b, const void *data, size_t len)
{
    if (b->data == NULL || b->cap - b->len <= len)
        return lc_buf_append_grow(b, data, len);
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}
/* Appends printf-formatted text. Returns 0 or LC_ENOMEM (b unchanged then). */
int lc_buf_appendf(lc_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lc_buf_vappendf(lc_buf_t *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
