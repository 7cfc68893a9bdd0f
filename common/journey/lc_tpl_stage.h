/* lc_tpl_stage.h — lc_tpl's byte transforms: the filters (|url |json |base64 |len) and the
 * escaping of each rendering mode, each writing into room its bound reserved. */
#ifndef LC_TPL_STAGE_H
#define LC_TPL_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "lc_tpl.h"

enum lc_tpl_filter {
    LC_TPL_FILTER_URL,
    LC_TPL_FILTER_JSON,
    LC_TPL_FILTER_BASE64,
    LC_TPL_FILTER_LEN,
};

typedef struct lc_tpl_stage_s {
    const char *name;
    /* The most bytes write produces from n bytes (SIZE_MAX when that would overflow). */
    size_t (*bound)(size_t n);
    /* Transforms src[0..n) into dst (bound(n) bytes, not overlapping src); returns the bytes
     * written. IN/OUT: *type, the value's enum lc_vtype. */
    size_t (*write)(const char *src, size_t n, uint8_t *type, char *dst);
} lc_tpl_stage_t;

/* The filter called name[0..n), or NULL; OUT: *id, its enum lc_tpl_filter. */
const lc_tpl_stage_t *lc_tpl_filter_find(const char *name, size_t n, uint8_t *id);
/* The filter of id (an enum lc_tpl_filter). */
const lc_tpl_stage_t *lc_tpl_filter(uint8_t id);
/* The escaping of mode; NULL for LC_TPL_RAW, which writes values as they are. */
const lc_tpl_stage_t *lc_tpl_escaper(lc_tpl_mode_t mode);

/* Writes v in decimal (at most 20 bytes); returns the length. */
size_t lc_tpl_write_u64(char *dst, uint64_t v);

#endif
