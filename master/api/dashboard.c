/* dashboard.c — serves the web dashboard embedded at build time. */
#include "dashboard.h"

#include <stdio.h>
#include <string.h>

#define UI_PREFIX "/ui/"

/* Every answer of the dashboard carries these. The policy allows only this
 * origin's own files: no inline script or style, no other host, no framing;
 * the page's API calls go to the same origin. The assets are revalidated on
 * every load (no-cache): they are small, and an upgraded master must never
 * serve a new index.html with an old app.js. */
#define COMMON_HEADERS                                                                      \
    "X-Content-Type-Options: nosniff\r\n"                                                   \
    "Referrer-Policy: no-referrer\r\n"                                                      \
    "Cache-Control: no-cache\r\n"
static const char security_headers[] =
    "Content-Security-Policy: default-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'; object-src 'none'\r\n" COMMON_HEADERS;

/* report.html replaces itself with the run's HTML report (a blob: document,
 * which inherits this policy); the report is one self-contained file with a
 * <style> element, so this page alone allows inline styles. Scripts stay
 * 'self' only. */
static const char report_headers[] =
    "Content-Security-Policy: default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'\r\n"
    COMMON_HEADERS;

static const struct {
    const char *ext;
    const char *type;
} content_types[] = {
    {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},          {".svg", "image/svg+xml"},
    {".png", "image/png"},                  {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
};

static const char *content_type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot != NULL && i < sizeof content_types / sizeof content_types[0]; i++)
        if (strcmp(dot, content_types[i].ext) == 0)
            return content_types[i].type;
    return "application/octet-stream";
}

static const dashboard_asset_t *asset_find(const char *name)
{
    for (size_t i = 0; i < dashboard_asset_count; i++)
        if (strcmp(dashboard_assets[i].name, name) == 0)
            return &dashboard_assets[i];
    return NULL;
}

static void respond_text(lc_http_exchange_t *ex, int status, const char *text, const char *extra)
{
    char headers[sizeof security_headers + 64];
    snprintf(headers, sizeof headers, "%s%s", security_headers, extra);
    lc_http_exchange_respond(ex, status, "text/plain; charset=utf-8", text, strlen(text), headers);
}

bool dashboard_owns(const char *path)
{
    return strcmp(path, "/") == 0 || strncmp(path, UI_PREFIX, sizeof UI_PREFIX - 1) == 0;
}

bool dashboard_serve(lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    if (!dashboard_owns(req->path))
        return false;
    const char *name = strcmp(req->path, "/") == 0 ? "index.html" : req->path + sizeof UI_PREFIX - 1;
    /* HEAD is a GET without the body (the HTTP server leaves it out). */
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
        respond_text(ex, 405, "method not allowed\n", "Allow: GET, HEAD\r\n");
        return true;
    }
    /* Names are compared with the table as they are: "..", "%2e" or "//"
     * can only miss, never reach a file outside it. */
    const dashboard_asset_t *a = asset_find(name);
    if (a == NULL) {
        respond_text(ex, 404, "not found\n", "");
        return true;
    }
    lc_http_exchange_respond(ex, 200, content_type_of(a->name), (const char *)a->data, a->len,
                             strcmp(a->name, "report.html") == 0 ? report_headers
                                                                 : security_headers);
    return true;
}
