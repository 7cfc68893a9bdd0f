/* yaml_json.h — a YAML scenario to JSON at the API's edge: libyaml's event parser, YAML 1.2 core-schema typing, and nothing a scenario does not need. */
#ifndef MASTER_API_YAML_JSON_H
#define MASTER_API_YAML_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define LC_YAML_MAX_BYTES (1u << 20) /* 1 MiB, the API's body limit */
#define LC_YAML_MAX_DEPTH 64u        /* nested mappings and sequences */
#define LC_YAML_MAX_NODES 1000000u   /* scalars (keys included) and collections */

/* Bounds of one conversion; each at most the LC_YAML_MAX_ above. */
typedef struct lc_yaml_limits_s {
    size_t max_bytes;
    size_t max_depth;
    size_t max_nodes;
} lc_yaml_limits_t;

/* Converts one YAML document to a JSON value. OUT: *out, a new reference,
 * when this returns 0.
 *
 * Typing (YAML 1.2 core schema) applies to plain scalars only: ~, null, Null,
 * NULL and empty are null; true/True/TRUE/false/False/FALSE booleans (so yes,
 * NO and on stay strings); [-+]?[0-9]+, 0o[0-7]+ and 0x[0-9a-fA-F]+ integers
 * (int64); [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? reals;
 * anything else a string (1:30 too). Quoted and block scalars are strings. A
 * key is its text ("1: x" has the key "1").
 *
 * Refused: anchors, aliases, tags (!!str too), merge keys (<<), duplicate
 * and non-scalar keys, a second document, %TAG and any %YAML but 1.2, .inf
 * and .nan (JSON cannot hold them), integers beyond int64, NUL (raw or as
 * "\0"), invalid UTF-8, and input past the limits. Returns LC_EINVAL or
 * LC_ETOOBIG with "<json path>: <what> (line L, column C)" in errmsg, where
 * the path is "scenario" for the document as a whole
 * ("journeys[0].steps[2]: duplicate key \"path\" (line 14, column 9)"), or
 * LC_ENOMEM. Lines and columns count from 1, columns in characters. */
int lc_yaml_to_json(const char *yaml, size_t len, json_t **out, char *errmsg, size_t errlen);

/* lc_yaml_to_json within other bounds (tests use smaller ones). */
int lc_yaml_to_json_limited(const char *yaml, size_t len, const lc_yaml_limits_t *limits,
                            json_t **out, char *errmsg, size_t errlen);

/* Where the value at a JSON path ("journeys[0].steps[2].path", as the converter and the
 * scenario's validation write paths) starts in yaml, from 1: that value's line and column, or
 * those of its deepest ancestor in the document when the path names something absent (a
 * missing field). False when not even the path's first key is there. Converts the document
 * again: for the error path, not per request. */
bool lc_yaml_locate(const char *yaml, size_t len, const char *path, size_t *line,
                    size_t *column);

/* A validation error about a scenario sent as yaml ("<json path>: <what>", msg of msglen
 * bytes) gets " (line L, column C)" of that path appended (lc_yaml_locate); unchanged when it
 * has no path, already names a line, or the path is not in the document. */
void lc_yaml_annotate(const char *yaml, size_t len, char *msg, size_t msglen);

#endif
