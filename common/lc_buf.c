/* lc_buf.c — growable byte buffers. */
#include "lc_buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

#define FIRST_CAP 256u

void lc_buf_init(lc_buf_t *b)
{
    memset(b, 0, sizeof *b);
}

void lc_buf_free(lc_buf_t *b)
{
    free(b->data);
    lc_buf_init(b);
}

int lc_buf_reserve(lc_buf_t *b, size_t extra)
{
    if (b->data != NULL && b->cap - b->len > extra)
        return 0;
    if (extra >= SIZE_MAX - b->len)
        return LC_ENOMEM;
    size_t cap = b->cap ? b->cap : FIRST_CAP;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2)
            return LC_ENOMEM;
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (data == NULL)
        return LC_ENOMEM;
    data[b->len] = '\0';
    b->data = data;
    b->cap = cap;
    return 0;
}

int lc_buf_append_grow(lc_buf_t *b, const void *data, size_t len)
{
    if (lc_buf_reserve(b, len) != 0)
        return LC_ENOMEM;
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int lc_buf_vappendf(lc_buf_t *b, const char *fmt, va_list ap)
{
    /* One vsnprintf when the text fits the room left, a second after growing. */
    va_list again;
    va_copy(again, ap);
    size_t room = b->data != NULL ? b->cap - b->len : 0;
    int n = vsnprintf(b->data != NULL ? b->data + b->len : NULL, room, fmt, ap);
    int rv = 0;
    if (n < 0 || ((size_t)n >= room && lc_buf_reserve(b, (size_t)n) != 0))
        rv = LC_ENOMEM;
    else if ((size_t)n >= room)
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    if (rv == 0)
        b->len += (size_t)n;
    if (b->data != NULL)
        b->data[b->len] = '\0'; /* a failed or cut attempt may have written past len */
    return rv;
}

int lc_buf_appendf(lc_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rv = lc_buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rv;
}
