/* lc_addr.h — parsing host:port addresses and http(s) URLs. */
#ifndef LC_ADDR_H
#define LC_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LC_HOST_MAX 256

typedef struct lc_hostport_s {
    char host[LC_HOST_MAX]; /* name or literal, IPv6 without brackets */
    uint16_t port;
} lc_hostport_t;

/* Parses "host:port", "[v6]:port", or a bare host when default_port != 0.
 * Returns 0 or LC_EINVAL with errmsg naming what was wrong. */
int lc_hostport_parse(const char *text, uint16_t default_port, lc_hostport_t *out,
                      char *errmsg, size_t errlen);

/* Whether host is an IPv4 or IPv6 address literal (no brackets) rather than a name. */
bool lc_addr_is_ip_literal(const char *host);

/* Formats "host:port", with brackets around an IPv6 literal. */
void lc_hostport_format(const lc_hostport_t *hp, char *buf, size_t len);

typedef struct lc_url_s {
    bool tls;                /* https */
    lc_hostport_t hp;        /* port defaults to 80 / 443 */
    char base_path[1024];    /* path prefix without trailing '/', may be "" */
} lc_url_t;

/* Parses "http://host[:port][/prefix]" or "https://…".
 * Returns 0 or LC_EINVAL with errmsg. */
int lc_url_parse(const char *text, lc_url_t *out, char *errmsg, size_t errlen);

#endif
