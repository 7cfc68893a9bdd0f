/* lc_value.h — a journey variable's value as templates, conditions and extraction see it:
 * bytes (not NUL-terminated, not owned) and the JSON type they came with. */
#ifndef LC_VALUE_H
#define LC_VALUE_H

#include <stddef.h>
#include <stdint.h>

enum lc_vtype {
    LC_V_STRING, /* text (a JSON string already decoded) */
    LC_V_NUMBER, /* a JSON number's text, e.g. "42" or "-1.5e3" */
    LC_V_BOOL,   /* "true" or "false" */
    LC_V_NULL,   /* "null" */
    LC_V_JSON,   /* an object's or array's JSON text, as it came */
};

typedef struct lc_value_s {
    const char *data;
    size_t len;
    uint8_t type; /* enum lc_vtype */
} lc_value_t;

#endif
