/* yaml_json.c — YAML to JSON over libyaml's events, one frame per open mapping or sequence. */
#include "yaml_json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "lc_err.h"
#include "lc_utf8.h"

#define PATH_MAX_LEN 256    /* of the JSON path in a message */
#define NAME_SHOW_MAX 64    /* bytes of a key, anchor or tag quoted in a message */
#define CORE_TAG_PREFIX "tag:yaml.org,2002:"

/* An open mapping or sequence. */
typedef struct frame_s {
    json_t *node; /* borrowed: its parent (or conv.root) holds it */
    bool map;
    char *key;    /* map: the key whose value comes next (malloc'd); NULL: a key comes next */
    size_t index; /* sequence: the index of the item being read */
} frame_t;

/* One conversion's state, passed to every step. */
typedef struct conv_s {
    const lc_yaml_limits_t *limits;
    const char *text;
    size_t len;
    frame_t frames[LC_YAML_MAX_DEPTH];
    size_t depth;
    size_t nodes;
    size_t documents;
    json_t *root;
    char *errmsg;
    size_t errlen;
    /* lc_yaml_locate: the JSON path looked for, and the deepest value found on it so far. */
    const char *want;
    size_t found_len;
    yaml_mark_t found;
} conv_t;

#define LOCATED 1 /* lc_yaml_locate: the value itself was found; the conversion stops */

/* ---- errors ---- */

/* The JSON path of the value being read: "tasks[2].headers"; "" at the root. */
static void path_of(const conv_t *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->depth && n + 1 < len; i++) {
        const frame_t *f = &c->frames[i];
        int w;
        if (f->map && f->key == NULL)
            break; /* the innermost mapping, waiting for a key */
        if (f->map)
            w = snprintf(buf + n, len - n, "%s%.*s", n > 0 ? "." : "", NAME_SHOW_MAX, f->key);
        else
            w = snprintf(buf + n, len - n, "[%zu]", f->index);
        if (w < 0)
            break;
        n += (size_t)w < len - n ? (size_t)w : len - n - 1;
    }
}

/* Writes "<path>: <what> (line L, column C)" and returns code. */
__attribute__((format(printf, 4, 5))) static int fail(conv_t *c, int code, const yaml_mark_t *at,
                                                      const char *fmt, ...)
{
    char path[PATH_MAX_LEN], what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    path_of(c, path, sizeof path);
    return lc_errf(c->errmsg, c->errlen, code, "%s: %s (line %zu, column %zu)",
                   path[0] ? path : "scenario", what, at->line + 1, at->column + 1);
}

static int out_of_memory(conv_t *c)
{
    return lc_errf(c->errmsg, c->errlen, LC_ENOMEM, "scenario: out of memory converting YAML");
}

/* The mark of byte offset in the input: lines end at '\n', columns count
 * characters (UTF-8 lead bytes), as libyaml's marks do. */
static yaml_mark_t mark_at(const conv_t *c, size_t offset)
{
    yaml_mark_t m = {.index = offset};
    for (size_t i = 0; i < offset && i < c->len; i++) {
        unsigned char b = (unsigned char)c->text[i];
        if (b == '\n') {
            m.line++;
            m.column = 0;
        } else if ((b & 0xc0) != 0x80) {
            m.column++;
        }
    }
    return m;
}

/* libyaml's own error: its problem, where it is, and what libyaml was reading. */
static int syntax_error(conv_t *c, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return out_of_memory(c);
    bool reader = p->error == YAML_READER_ERROR;
    yaml_mark_t at = reader ? mark_at(c, p->problem_offset) : p->problem_mark;
    char path[PATH_MAX_LEN], context[160] = "";
    path_of(c, path, sizeof path);
    if (p->context != NULL && !reader)
        snprintf(context, sizeof context, ", %s that starts at line %zu, column %zu", p->context,
                 p->context_mark.line + 1, p->context_mark.column + 1);
    return lc_errf(c->errmsg, c->errlen, LC_EINVAL, "%s: YAML syntax error: %s (line %zu, column "
                   "%zu)%s", path[0] ? path : "scenario", p->problem ? p->problem : "malformed YAML",
                   at.line + 1, at.column + 1, context);
}

/* NUL and invalid UTF-8 are refused before libyaml reads a byte. */
static int check_text(conv_t *c)
{
    for (size_t i = 0; i < c->len;) {
        size_t n = lc_utf8_seq_len(c->text + i, c->len - i);
        if (c->text[i] != '\0' && n > 0) {
            i += n;
            continue;
        }
        yaml_mark_t at = mark_at(c, i);
        if (n > 0)
            return fail(c, LC_EINVAL, &at, "NUL byte at offset %zu", i);
        return fail(c, LC_EINVAL, &at, "invalid UTF-8 (byte 0x%02x at offset %zu)",
                    (unsigned char)c->text[i], i);
    }
    return 0;
}

/* ---- plain scalars: the YAML 1.2 core schema ---- */

static bool is_one_of(const char *s, const char *const *words)
{
    for (size_t i = 0; words[i] != NULL; i++)
        if (strcmp(s, words[i]) == 0)
            return true;
    return false;
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"true", "True", "TRUE", NULL};
static const char *const false_words[] = {"false", "False", "FALSE", NULL};
static const char *const inf_nan_words[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
                                            "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN",
                                            NULL};

/* Accumulates the digits of s in base into *v; false on overflow past max.
 * s holds digits of that base only (the caller matched them). */
static bool digits_value(const char *s, unsigned base, uint64_t max, uint64_t *v)
{
    *v = 0;
    for (; *s != '\0'; s++) {
        unsigned d = *s <= '9' ? (unsigned)(*s - '0') : (unsigned)((*s | 0x20) - 'a' + 10);
        if (*v > (max - d) / base)
            return false;
        *v = *v * base + d;
    }
    return true;
}

/* 1: s is a core-schema integer, its value in *v; 0: not one; -1: one past int64. */
static int int_value(const char *s, json_int_t *v)
{
    uint64_t u;
    if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0o", 2) == 0) {
        const char *digits = s[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567";
        if (s[2] == '\0' || strspn(s + 2, digits) != strlen(s + 2))
            return 0;
        if (!digits_value(s + 2, s[1] == 'x' ? 16 : 8, INT64_MAX, &u))
            return -1;
        *v = (json_int_t)u;
        return 1;
    }
    bool negative = s[0] == '-';
    const char *d = s + (s[0] == '-' || s[0] == '+');
    if (d[0] == '\0' || strspn(d, "0123456789") != strlen(d))
        return 0;
    if (!digits_value(d, 10, negative ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u))
        return -1;
    *v = negative ? (json_int_t)(0 - u) : (json_int_t)u;
    return 1;
}

/* s matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float(const char *s)
{
    static const char digits[] = "0123456789";
    s += *s == '-' || *s == '+';
    size_t whole = strspn(s, digits);
    s += whole;
    if (*s == '.') {
        size_t frac = strspn(s + 1, digits);
        if (whole == 0 && frac == 0)
            return false;
        s += 1 + frac;
    } else if (whole == 0) {
        return false;
    }
    if (*s == 'e' || *s == 'E') {
        s += 1 + (s[1] == '-' || s[1] == '+');
        size_t exp = strspn(s, digits);
        if (exp == 0)
            return false;
        s += exp;
    }
    return *s == '\0';
}

/* The JSON value of a plain scalar s (NUL-terminated, len bytes). */
static int plain_value(conv_t *c, const char *s, size_t len, const yaml_mark_t *at, json_t **out)
{
    json_int_t i = 0;
    int is_int = int_value(s, &i);
    if (is_one_of(s, null_words))
        *out = json_null();
    else if (is_one_of(s, true_words))
        *out = json_true();
    else if (is_one_of(s, false_words))
        *out = json_false();
    else if (is_int < 0)
        return fail(c, LC_EINVAL, at, "integer %.*s is out of range (64 bits); quote it to keep "
                    "it a string", NAME_SHOW_MAX, s);
    else if (is_int > 0)
        *out = json_integer(i);
    else if (is_one_of(s, inf_nan_words))
        return fail(c, LC_EINVAL, at, "%s cannot be written in JSON; quote it to keep it a "
                    "string", s);
    else if (is_float(s)) {
        double d = strtod(s, NULL);
        if (!isfinite(d))
            return fail(c, LC_EINVAL, at, "number %.*s is out of range", NAME_SHOW_MAX, s);
        *out = json_real(d);
    } else {
        *out = json_stringn(s, len);
    }
    return *out == NULL ? out_of_memory(c) : 0;
}

/* ---- the tree ---- */

/* lc_yaml_locate: notes where the value about to be read starts when its path is the one
 * looked for (LOCATED) or the deepest of that path's ancestors yet. */
static int locate(conv_t *c, const yaml_mark_t *at)
{
    char path[PATH_MAX_LEN];
    if (c->want == NULL)
        return 0;
    path_of(c, path, sizeof path);
    size_t n = strlen(path);
    if (n == 0 || n <= c->found_len || strncmp(c->want, path, n) != 0 ||
        strchr(".[", c->want[n]) == NULL) /* strchr matches the NUL too: the path itself */
        return 0;
    c->found_len = n;
    c->found = *at;
    return c->want[n] == '\0' ? LOCATED : 0;
}

/* Puts v (taken) where the next value goes: the root, the value of the
 * innermost mapping's pending key, or the end of the innermost sequence. */
static int place(conv_t *c, json_t *v)
{
    if (c->depth == 0) {
        assert(c->root == NULL); /* one root a document, and one document */
        c->root = v;
        return 0;
    }
    frame_t *f = &c->frames[c->depth - 1];
    assert(!f->map || f->key != NULL);
    int rv = f->map ? json_object_set_new(f->node, f->key, v) : json_array_append_new(f->node, v);
    return rv == 0 ? 0 : out_of_memory(c);
}

/* The value placed last is complete: its mapping waits for a key again, its
 * sequence for the next item. */
static void advance(conv_t *c)
{
    if (c->depth == 0)
        return;
    frame_t *f = &c->frames[c->depth - 1];
    if (f->map) {
        free(f->key);
        f->key = NULL;
    } else {
        f->index++;
    }
}

/* The innermost frame is a mapping that waits for a key. */
static bool key_expected(const conv_t *c)
{
    return c->depth > 0 && c->frames[c->depth - 1].map && c->frames[c->depth - 1].key == NULL;
}

/* Counts a node and refuses an anchor or a tag on it. */
static int check_node(conv_t *c, const yaml_mark_t *at, const yaml_char_t *anchor,
                      const yaml_char_t *tag)
{
    if (++c->nodes > c->limits->max_nodes)
        return fail(c, LC_ETOOBIG, at, "more than %zu nodes", c->limits->max_nodes);
    if (anchor != NULL)
        return fail(c, LC_EINVAL, at, "anchors (&%.*s) are not supported; write the value out",
                    NAME_SHOW_MAX, (const char *)anchor);
    if (tag == NULL)
        return 0;
    const char *t = (const char *)tag;
    bool core = strncmp(t, CORE_TAG_PREFIX, strlen(CORE_TAG_PREFIX)) == 0;
    return fail(c, LC_EINVAL, at, "tags (%s%.*s) are not supported; quote a value to make it "
                "a string", core ? "!!" : "", NAME_SHOW_MAX, core ? t + strlen(CORE_TAG_PREFIX) : t);
}

static int on_key(conv_t *c, const yaml_event_t *ev)
{
    frame_t *f = &c->frames[c->depth - 1];
    const char *key = (const char *)ev->data.scalar.value;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (memchr(key, '\0', ev->data.scalar.length) != NULL)
        return fail(c, LC_EINVAL, &ev->start_mark, "NUL character in a key");
    if (plain && strcmp(key, "<<") == 0)
        return fail(c, LC_EINVAL, &ev->start_mark, "merge keys (<<) are not supported");
    if (json_object_get(f->node, key) != NULL)
        return fail(c, LC_EINVAL, &ev->start_mark, "duplicate key \"%.*s\"", NAME_SHOW_MAX, key);
    f->key = strdup(key);
    return f->key == NULL ? out_of_memory(c) : 0;
}

static int on_scalar(conv_t *c, const yaml_event_t *ev)
{
    int rv = check_node(c, &ev->start_mark, ev->data.scalar.anchor, ev->data.scalar.tag);
    if (rv != 0)
        return rv;
    if (key_expected(c))
        return on_key(c, ev);
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    json_t *v = NULL;
    if ((rv = locate(c, &ev->start_mark)) != 0)
        return rv;
    if (memchr(s, '\0', len) != NULL)
        return fail(c, LC_EINVAL, &ev->start_mark, "NUL character in a string");
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && (v = json_stringn(s, len)) == NULL)
        return out_of_memory(c);
    if (v == NULL && (rv = plain_value(c, s, len, &ev->start_mark, &v)) != 0)
        return rv;
    if ((rv = place(c, v)) == 0)
        advance(c);
    return rv;
}

static int on_collection_start(conv_t *c, const yaml_event_t *ev, bool map)
{
    const yaml_char_t *anchor = map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    const yaml_char_t *tag = map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    int rv = check_node(c, &ev->start_mark, anchor, tag);
    if (rv != 0)
        return rv;
    if (key_expected(c))
        return fail(c, LC_EINVAL, &ev->start_mark, "a key must be a scalar, not a %s",
                    map ? "mapping" : "sequence");
    if (c->depth == c->limits->max_depth)
        return fail(c, LC_ETOOBIG, &ev->start_mark, "nested deeper than %zu levels",
                    c->limits->max_depth);
    if ((rv = locate(c, &ev->start_mark)) != 0)
        return rv;
    json_t *node = map ? json_object() : json_array();
    if (node == NULL)
        return out_of_memory(c);
    if ((rv = place(c, node)) != 0)
        return rv;
    c->frames[c->depth++] = (frame_t){.node = node, .map = map};
    return 0;
}

static void on_collection_end(conv_t *c)
{
    assert(c->depth > 0); /* libyaml pairs every end with its start */
    c->depth--;
    assert(c->frames[c->depth].key == NULL); /* a value follows every key */
    advance(c);
}

static int on_document(conv_t *c, const yaml_event_t *ev)
{
    const yaml_version_directive_t *v = ev->data.document_start.version_directive;
    if (++c->documents > 1)
        return fail(c, LC_EINVAL, &ev->start_mark, "a second YAML document; a scenario is one "
                    "document");
    if (ev->data.document_start.tag_directives.start != ev->data.document_start.tag_directives.end)
        return fail(c, LC_EINVAL, &ev->start_mark, "%%TAG directives are not supported");
    if (v != NULL && (v->major != 1 || v->minor != 2))
        return fail(c, LC_EINVAL, &ev->start_mark, "%%YAML %d.%d: only YAML 1.2 is read", v->major,
                    v->minor);
    return 0;
}

static int on_event(conv_t *c, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        return on_document(c, ev);
    case YAML_ALIAS_EVENT:
        return fail(c, LC_EINVAL, &ev->start_mark, "aliases (*%.*s) are not supported; write the "
                    "value out", NAME_SHOW_MAX, (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return on_scalar(c, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return on_collection_start(c, ev, ev->type == YAML_MAPPING_START_EVENT);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        on_collection_end(c);
        return 0;
    case YAML_STREAM_END_EVENT:
        if (c->documents == 0) {
            yaml_mark_t at = ev->start_mark;
            return fail(c, LC_EINVAL, &at, "no YAML document (the text is empty or only "
                        "comments)");
        }
        return 0;
    default: /* stream start, document end, no event */
        return 0;
    }
}

static int convert(conv_t *c)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return out_of_memory(c);
    yaml_parser_set_input_string(&p, (const unsigned char *)c->text, c->len);
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
    int rv = 0;
    for (bool end = false; rv == 0 && !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rv = syntax_error(c, &p);
            break;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rv = on_event(c, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rv;
}

/* Allocates a conversion of yaml[0..len) within limits, errors to errmsg. */
static conv_t *conv_new(const char *yaml, size_t len, const lc_yaml_limits_t *limits,
                        char *errmsg, size_t errlen)
{
    conv_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->limits = limits;
    c->text = yaml;
    c->len = len;
    c->errmsg = errmsg;
    c->errlen = errlen;
    return c;
}

/* Runs c to the end (or to LOCATED), then frees what the frames still hold. */
static int conv_run(conv_t *c)
{
    int rv = check_text(c);
    if (rv == 0)
        rv = convert(c);
    for (size_t i = 0; i < c->depth; i++)
        free(c->frames[i].key);
    return rv;
}

int lc_yaml_to_json_limited(const char *yaml, size_t len, const lc_yaml_limits_t *limits,
                            json_t **out, char *errmsg, size_t errlen)
{
    assert(yaml != NULL && limits != NULL && out != NULL);
    assert(limits->max_depth <= LC_YAML_MAX_DEPTH && limits->max_bytes <= LC_YAML_MAX_BYTES &&
           limits->max_nodes <= LC_YAML_MAX_NODES);
    *out = NULL;
    if (len > limits->max_bytes)
        return lc_errf(errmsg, errlen, LC_ETOOBIG, "scenario: larger than %zu bytes",
                       limits->max_bytes);
    conv_t *c = conv_new(yaml, len, limits, errmsg, errlen);
    if (c == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "scenario: out of memory converting YAML");
    int rv = conv_run(c);
    if (rv == 0)
        *out = c->root;
    else
        json_decref(c->root);
    free(c);
    return rv;
}

static const lc_yaml_limits_t default_limits = {LC_YAML_MAX_BYTES, LC_YAML_MAX_DEPTH,
                                                LC_YAML_MAX_NODES};

bool lc_yaml_locate(const char *yaml, size_t len, const char *path, size_t *line,
                    size_t *column)
{
    char ignored[64];
    assert(yaml != NULL && path != NULL && line != NULL && column != NULL);
    if (len > default_limits.max_bytes)
        return false;
    conv_t *c = conv_new(yaml, len, &default_limits, ignored, sizeof ignored);
    if (c == NULL)
        return false;
    c->want = path;
    (void)conv_run(c); /* a document that converts no further still says where it got */
    json_decref(c->root);
    bool found = c->found_len > 0;
    *line = c->found.line + 1;
    *column = c->found.column + 1;
    free(c);
    return found;
}

/* The JSON path a message starts with ("journeys[0].steps[2]: …"), into path; false when
 * it starts with none, or with "scenario" (the document as a whole). */
static bool message_path(const char *msg, char *path, size_t len)
{
    const char *colon = strstr(msg, ": ");
    size_t n = colon != NULL ? (size_t)(colon - msg) : 0;
    if (n == 0 || n >= len || memchr(msg, ' ', n) != NULL ||
        (n == 8 && strncmp(msg, "scenario", 8) == 0))
        return false;
    memcpy(path, msg, n);
    path[n] = '\0';
    return true;
}

void lc_yaml_annotate(const char *yaml, size_t len, char *msg, size_t msglen)
{
    char path[PATH_MAX_LEN];
    size_t line, column, n = strlen(msg);
    if (strstr(msg, "(line ") != NULL || !message_path(msg, path, sizeof path) ||
        !lc_yaml_locate(yaml, len, path, &line, &column))
        return;
    snprintf(msg + n, n < msglen ? msglen - n : 0, " (line %zu, column %zu)", line, column);
}

int lc_yaml_to_json(const char *yaml, size_t len, json_t **out, char *errmsg, size_t errlen)
{
    return lc_yaml_to_json_limited(yaml, len, &default_limits, out, errmsg, errlen);
}
