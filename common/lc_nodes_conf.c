/* lc_nodes_conf.c — parses nodes.conf (id, raft, worker and API address per master). */
#include "lc_nodes_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"
#include "lc_file.h"

#define LINE_MAX_LEN 1024
#define FILE_MAX_BYTES (64u * 1024u)
#define FIELDS 4
#define ID_MAX ((uint64_t)LC_NODES_MAX * 1000)

/* Where we are in the text, for "<file>:<line>: …" messages. */
typedef struct conf_parser_s {
    const char *filename;
    size_t line;
    char *errmsg;
    size_t errlen;
    size_t node_line[LC_NODES_MAX]; /* line of each node, for duplicate messages */
} conf_parser_t;

static const char *const kinds[] = {"raft", "worker", "api"};

/* Writes "<file>:<line>: <what>" and returns LC_EINVAL. */
__attribute__((format(printf, 2, 3))) static int fail(conf_parser_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lc_verrf(p->errmsg, p->errlen, LC_EINVAL, fmt, ap);
    va_end(ap);
    return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s:%zu", p->filename, p->line);
}

static const lc_hostport_t *addr_of(const lc_node_t *node, size_t kind)
{
    return kind == 0 ? &node->raft : kind == 1 ? &node->worker : &node->api;
}

/* Splits a line (comment already cut) on blanks; returns the field count, which may
 * exceed FIELDS (only the first FIELDS are stored). */
static size_t split_fields(char *line, char *fields[FIELDS])
{
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\v\f", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (n < FIELDS)
            fields[n] = tok;
        n++;
    }
    return n;
}

static int parse_id(conf_parser_t *p, const char *text, uint64_t *out)
{
    char *end;
    if (strspn(text, "0123456789") != strlen(text) || strlen(text) > 6)
        return fail(p, "id must be an integer from 1 to %llu", (unsigned long long)ID_MAX);
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || v < 1 || v > ID_MAX)
        return fail(p, "id must be an integer from 1 to %llu", (unsigned long long)ID_MAX);
    *out = v;
    return 0;
}

static int parse_addr(conf_parser_t *p, const char *kind, const char *text, lc_hostport_t *out)
{
    char sub[LC_HOST_MAX + 128];
    char quoted[LC_HOST_MAX + 128];
    if (lc_hostport_parse(text, 0, out, sub, sizeof sub) == 0)
        return 0;
    /* lc_hostport_parse says "'<text>': <what>"; we say "<kind> address '<text>' <what>". */
    snprintf(quoted, sizeof quoted, "'%s': ", text);
    if (strncmp(sub, quoted, strlen(quoted)) == 0)
        return fail(p, "%s address '%s' %s", kind, text, sub + strlen(quoted));
    return fail(p, "%s address %s", kind, sub);
}

static bool same_addr(const lc_hostport_t *a, const lc_hostport_t *b)
{
    return a->port == b->port && strcasecmp(a->host, b->host) == 0;
}

static void format_addr(const lc_hostport_t *a, char *buf, size_t len)
{
    if (strchr(a->host, ':') != NULL)
        snprintf(buf, len, "[%s]:%u", a->host, (unsigned)a->port);
    else
        snprintf(buf, len, "%s:%u", a->host, (unsigned)a->port);
}

/* One address of a new node must not repeat any earlier one: of earlier nodes, or an
 * earlier field of the same line. */
static int check_addr(conf_parser_t *p, const lc_nodes_conf_t *c, const lc_node_t *node,
                      size_t k)
{
    char text[LC_HOST_MAX + 16];
    const lc_hostport_t *a = addr_of(node, k);
    for (size_t i = 0; i <= c->n; i++) {
        const lc_node_t *other = i < c->n ? &c->nodes[i] : node;
        size_t n_kinds = i < c->n ? 3 : k;
        for (size_t j = 0; j < n_kinds; j++) {
            if (!same_addr(a, addr_of(other, j)))
                continue;
            format_addr(a, text, sizeof text);
            return fail(p, "%s address %s already used as %s address on line %zu", kinds[k],
                        text, kinds[j], i < c->n ? p->node_line[i] : p->line);
        }
    }
    return 0;
}

static int check_unique(conf_parser_t *p, const lc_nodes_conf_t *c, const lc_node_t *node)
{
    int rv;
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == node->id)
            return fail(p, "duplicate id %llu (first on line %zu)", (unsigned long long)node->id,
                        p->node_line[i]);
    for (size_t k = 0; k < 3; k++)
        if ((rv = check_addr(p, c, node, k)) != 0)
            return rv;
    return 0;
}

static int parse_line(conf_parser_t *p, char *line, lc_nodes_conf_t *c)
{
    char *fields[FIELDS];
    char *hash = strchr(line, '#');
    lc_node_t node;
    lc_hostport_t *addrs[3] = {&node.raft, &node.worker, &node.api};
    int rv;
    if (hash != NULL)
        *hash = '\0';
    size_t n = split_fields(line, fields);
    if (n == 0)
        return 0;
    if (n != FIELDS)
        return fail(p, "expected 4 fields (id raft-address worker-address api-address), got %zu",
                    n);
    memset(&node, 0, sizeof node);
    if ((rv = parse_id(p, fields[0], &node.id)) != 0)
        return rv;
    for (size_t k = 0; k < 3; k++)
        if ((rv = parse_addr(p, kinds[k], fields[k + 1], addrs[k])) != 0)
            return rv;
    if (c->n == LC_NODES_MAX)
        return fail(p, "more than %d nodes", LC_NODES_MAX);
    if ((rv = check_unique(p, c, &node)) != 0)
        return rv;
    p->node_line[c->n] = p->line;
    c->nodes[c->n++] = node;
    return 0;
}

int lc_nodes_conf_parse(const char *text, const char *filename, lc_nodes_conf_t *out,
                        char *errmsg, size_t errlen)
{
    conf_parser_t p = {.filename = filename, .errmsg = errmsg, .errlen = errlen};
    char line[LINE_MAX_LEN + 1];
    int rv = 0;
    memset(out, 0, sizeof *out);
    for (const char *s = text; *s != '\0' && rv == 0;) {
        size_t len = strcspn(s, "\n");
        p.line++;
        if (len > LINE_MAX_LEN) {
            rv = fail(&p, "line longer than %d characters", LINE_MAX_LEN);
            break;
        }
        memcpy(line, s, len);
        line[len] = '\0';
        rv = parse_line(&p, line, out);
        s += len + (s[len] == '\n');
    }
    if (rv == 0 && out->n == 0)
        rv = lc_errf(errmsg, errlen, LC_EINVAL, "%s: no nodes", filename);
    if (rv != 0)
        memset(out, 0, sizeof *out);
    return rv;
}

int lc_nodes_conf_load(const char *path, lc_nodes_conf_t *out, char *errmsg, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    int rv = lc_file_read(path, FILE_MAX_BYTES, &buf, &n, errmsg, errlen);
    if (rv != 0)
        return rv == LC_ETOOBIG ? LC_EINVAL : rv;
    if (memchr(buf, '\0', n) != NULL)
        rv = lc_errf(errmsg, errlen, LC_EINVAL, "%s: contains a NUL byte", path);
    else
        rv = lc_nodes_conf_parse(buf, path, out, errmsg, errlen);
    free(buf);
    return rv;
}

const lc_node_t *lc_nodes_conf_find(const lc_nodes_conf_t *c, uint64_t id)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id)
            return &c->nodes[i];
    return NULL;
}
