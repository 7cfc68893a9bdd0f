/* lc_addr.c — host:port and URL parsing. */
#include "lc_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"

static int parse_port(const char *text, uint16_t *out)
{
    char *end;
    if (*text < '0' || *text > '9')
        return LC_EINVAL;
    unsigned long v = strtoul(text, &end, 10);
    if (*end != '\0' || v == 0 || v > 65535)
        return LC_EINVAL;
    *out = (uint16_t)v;
    return 0;
}

static int copy_host(lc_hostport_t *out, const char *host, size_t len)
{
    if (len == 0 || len >= LC_HOST_MAX)
        return LC_EINVAL;
    memcpy(out->host, host, len);
    out->host[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (host[i] <= ' ' || host[i] == 0x7f || strchr("/@[]", host[i]) != NULL)
            return LC_EINVAL;
    /* A host with a colon can only be an IPv6 literal (bracketed or bare). */
    struct in6_addr v6;
    if (memchr(host, ':', len) != NULL && inet_pton(AF_INET6, out->host, &v6) != 1)
        return LC_EINVAL;
    return 0;
}

int lc_hostport_parse(const char *text, uint16_t default_port, lc_hostport_t *out,
                      char *errmsg, size_t errlen)
{
    const char *host = text, *port = NULL;
    size_t host_len;
    memset(out, 0, sizeof *out);
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL)
            return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': missing ']' after IPv6 address", text);
        host = text + 1;
        host_len = (size_t)(close - host);
        if (close[1] == ':')
            port = close + 2;
        else if (close[1] != '\0')
            goto bad;
    } else {
        const char *colon = strrchr(text, ':');
        if (colon != NULL && strchr(text, ':') != colon)
            colon = NULL; /* bare IPv6 without brackets: no port */
        host_len = colon ? (size_t)(colon - text) : strlen(text);
        port = colon ? colon + 1 : NULL;
    }
    if (copy_host(out, host, host_len) != 0)
        goto bad;
    if (port == NULL) {
        if (default_port == 0)
            return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': expected host:port", text);
        out->port = default_port;
        return 0;
    }
    if (parse_port(port, &out->port) != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': port must be a number from 1 to 65535",
                       text);
    return 0;
bad:
    return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': expected host:port", text);
}

void lc_hostport_format(const lc_hostport_t *hp, char *buf, size_t len)
{
    snprintf(buf, len, strchr(hp->host, ':') ? "[%s]:%u" : "%s:%u", hp->host, hp->port);
}

int lc_url_parse(const char *text, lc_url_t *out, char *errmsg, size_t errlen)
{
    const char *rest;
    memset(out, 0, sizeof *out);
    if (strncasecmp(text, "http://", 7) == 0) {
        rest = text + 7;
    } else if (strncasecmp(text, "https://", 8) == 0) {
        rest = text + 8;
        out->tls = true;
    } else {
        return lc_errf(errmsg, errlen, LC_EINVAL,
                       "'%s': expected a URL starting with http:// or https://", text);
    }
    const char *slash = strchr(rest, '/');
    size_t auth_len = slash ? (size_t)(slash - rest) : strlen(rest);
    char authority[LC_HOST_MAX + 16];
    if (auth_len == 0 || auth_len >= sizeof authority)
        return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': missing or too long host", text);
    memcpy(authority, rest, auth_len);
    authority[auth_len] = '\0';
    char sub[256];
    if (lc_hostport_parse(authority, out->tls ? 443 : 80, &out->hp, sub, sizeof sub) != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': bad host or port", text);
    if (slash != NULL) {
        size_t plen = strlen(slash);
        while (plen > 0 && slash[plen - 1] == '/')
            plen--;
        if (plen >= sizeof out->base_path || memchr(slash, '?', plen) || memchr(slash, ' ', plen))
            return lc_errf(errmsg, errlen, LC_EINVAL, "'%s': path prefix too long or has a query",
                           text);
        memcpy(out->base_path, slash, plen);
        out->base_path[plen] = '\0';
    }
    return 0;
}

bool lc_addr_is_ip_literal(const char *host)
{
    unsigned char addr[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}
