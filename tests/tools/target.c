/* target.c — lc_target, the fast libuv HTTP/1.1 (and, with --http2, h2c) server the tests,
 * benchmarks and demo load: flags, loop threads and signals. Connections are in target_conn.c
 * (HTTP/2 sessions in target_h2.c), what a request gets in target_plan.c, counters in
 * target_stats.c, the app paths in target_app.c. */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <uv.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "target.h"
#include "target_app_enc.h"

/* ---- engines ---- */

static void on_stop(uv_async_t *a)
{
    engine_t *e = a->data;
    while (e->conns != NULL)
        conn_close(e->conns);
    uv_close((uv_handle_t *)&e->listener, NULL);
    uv_close((uv_handle_t *)&e->stop, NULL);
}

static void *engine_run(void *arg)
{
    engine_t *e = arg;
    uv_run(&e->loop, UV_RUN_DEFAULT);
    app_enc_thread_free();
    return NULL;
}

/* Sets up a loop with a listener on sa (SO_REUSEPORT when several engines share the port). */
static int engine_init(engine_t *e, target_t *t, const struct sockaddr *sa, char *errmsg,
                       size_t errlen)
{
    int rv, on = 1;
    uv_os_fd_t fd;
    e->t = t;
    e->rng = uv_hrtime() ^ (uintptr_t)e;
    if ((rv = uv_loop_init(&e->loop)) != 0)
        goto err;
    if ((rv = uv_tcp_init_ex(&e->loop, &e->listener, sa->sa_family)) != 0)
        goto err_after_loop;
    e->listener.data = e;
    if (t->cfg.threads > 1 && (uv_fileno((uv_handle_t *)&e->listener, &fd) != 0 ||
                               setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0)) {
        rv = uv_translate_sys_error(errno);
        goto err_after_listener;
    }
    if ((rv = uv_tcp_bind(&e->listener, sa, 0)) != 0 ||
        (rv = uv_listen((uv_stream_t *)&e->listener, 4096, conn_on_connection)) != 0)
        goto err_after_listener;
    if ((rv = uv_async_init(&e->loop, &e->stop, on_stop)) != 0)
        goto err_after_listener;
    e->stop.data = e;
    return 0;
err_after_listener:
    uv_close((uv_handle_t *)&e->listener, NULL);
    uv_run(&e->loop, UV_RUN_DEFAULT);
err_after_loop:
    uv_loop_close(&e->loop);
err:
    snprintf(errmsg, errlen, "listen on %s:%u: %s", t->cfg.listen.host, t->cfg.listen.port,
             uv_strerror(rv));
    return LC_EIO;
}

/* Turns the --listen host, a numeric IPv4 or IPv6 address, into out. */
static int resolve(const lc_hostport_t *hp, struct sockaddr_storage *out, char *errmsg,
                   size_t errlen)
{
    if (uv_ip4_addr(hp->host, hp->port, (struct sockaddr_in *)out) == 0 ||
        uv_ip6_addr(hp->host, hp->port, (struct sockaddr_in6 *)out) == 0)
        return 0;
    snprintf(errmsg, errlen, "--listen %s: expected a numeric IPv4 or IPv6 address", hp->host);
    return LC_EINVAL;
}

static int bound_port(engine_t *e)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getsockname(&e->listener, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* Starts every engine; with port 0 the first picks a port and the others join it. */
static int engines_start(target_t *t, char *errmsg, size_t errlen)
{
    struct sockaddr_storage ss;
    int rv = resolve(&t->cfg.listen, &ss, errmsg, errlen);
    for (unsigned i = 0; rv == 0 && i < t->cfg.threads; i++) {
        engine_t *e = calloc(1, sizeof *e);
        if (e == NULL) {
            snprintf(errmsg, errlen, "out of memory");
            return LC_ENOMEM;
        }
        if ((rv = engine_init(e, t, (struct sockaddr *)&ss, errmsg, errlen)) != 0) {
            free(e);
            return rv;
        }
        t->engines[t->nengines++] = e;
        t->cfg.listen.port = (uint16_t)bound_port(e);
        if (ss.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(t->cfg.listen.port);
        else
            ((struct sockaddr_in *)&ss)->sin_port = htons(t->cfg.listen.port);
    }
    return rv;
}

/* ---- process ---- */

static void on_signal(uv_signal_t *s, int signum)
{
    target_t *t = s->data;
    for (unsigned i = 0; i < t->nengines; i++)
        uv_async_send(&t->engines[i]->stop);
    uv_close((uv_handle_t *)&t->sigterm, NULL);
    uv_close((uv_handle_t *)&t->sigint, NULL);
}

/* Writes the port to a temporary file renamed into place, so readers never see half of it. */
static int write_port_file(const char *path, unsigned port, char *errmsg, size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(errmsg, errlen, "port file %s: %s", path, strerror(errno));
        return LC_EIO;
    }
    return 0;
}

static void usage(FILE *out)
{
    fputs("usage: lc_target [options]\n"
          "  --listen HOST:PORT       address to serve (default 127.0.0.1:8080; port 0 = any)\n"
          "  --latency-ms N           fixed delay before each response (default 0)\n"
          "  --latency-jitter-ms N    extra uniform delay 0..N\n"
          "  --status CODE            response status, 200..599 (default 200)\n"
          "  --body-size BYTES        response body of 'x' (default 64, at most 16 MiB)\n"
          "  --threads N              loop threads sharing the port via SO_REUSEPORT (default 1)\n"
          "  --stall-at-ms T          with --stall-ms D: responses due between T and T+D ms\n"
          "  --stall-ms D               after the first request are held until T+D\n"
          "  --http2                  also speak HTTP/2 by prior knowledge (h2c) on the port\n"
          "  --h2-max-streams N       concurrent streams a connection may open (default 100)\n"
          "  --h2-goaway-after N      after N streams on a connection: GOAWAY, refuse later\n"
          "                             streams (REFUSED_STREAM), finish the rest and close\n"
          "  --port-file PATH         write the bound port to PATH once listening\n"
          "  --quiet                  no startup line on stderr\n"
          "  --help                   this text\n"
          "Per request: ?status=N ?latency_ms=N ?size=N ?close=1, /status/NNN; HTTP/2 only:\n"
          "  ?rst=1 (RST_STREAM INTERNAL_ERROR), ?rst=refused (REFUSED_STREAM), when due.\n"
          "App paths (a stateless shop for journeys; details in tests/tools/target_app.h):\n"
          "  POST /login[?token_len=N]  {\"user\",\"password\"} or a form: token + session cookie\n"
          "  GET /me (Bearer token + session cookie)   GET /items[?n=N]   GET /items/ID\n"
          "  GET|POST /cart, POST /pay (session cookie)   POST /logout\n"
          "  /redirect/N[?code=301..308][&rel=1]   /redirect-away   /redirect-loop\n"
          "  /redirect-to/HOST:PORT/PATH (Location: http://HOST:PORT/PATH)\n"
          "  /echo (method, path, headers, cookies, body as JSON)   GET /setcookie?k=v&attrs=A\n"
          "  GET /gzip, /deflate, /br [?size=N][&force=1] (encoded as accepted)   GET /bomb[?coding=C][&mib=M]\n"
          "Control: GET /__stats (JSON counters by path, without the query string; all\n"
          "  /items/ID as /items/:id), POST /__reset. SIGTERM/SIGINT print the stats.\n",
          out);
}

static int number_arg(const char *name, const char *text, unsigned long min, unsigned long max,
                      unsigned long *out)
{
    if (parse_digits(text, strlen(text), max, out) && *out >= min)
        return 0;
    fprintf(stderr, "lc_target: --%s: expected a number from %lu to %lu, got '%s'\n", name, min,
            max, text);
    return LC_EINVAL;
}

/* lc_hostport_parse refuses port 0, which we accept to mean "any free port". */
static int listen_arg(const char *text, lc_hostport_t *out)
{
    char buf[LC_HOST_MAX + 16], errmsg[256];
    size_t n = strlen(text);
    bool any = n >= 2 && strcmp(text + n - 2, ":0") == 0 && n < sizeof buf;
    if (any) {
        memcpy(buf, text, n + 1);
        buf[n - 1] = '1';
    }
    if (lc_hostport_parse(any ? buf : text, 0, out, errmsg, sizeof errmsg) != 0) {
        fprintf(stderr, "lc_target: --listen: %s\n", errmsg);
        return LC_EINVAL;
    }
    if (any)
        out->port = 0;
    return 0;
}

static int apply_option(config_t *cfg, int opt, const char *arg)
{
    switch (opt) {
    case 'l': return listen_arg(arg, &cfg->listen);
    case 'L': return number_arg("latency-ms", arg, 0, LATENCY_MAX_MS, &cfg->latency_ms);
    case 'J': return number_arg("latency-jitter-ms", arg, 0, LATENCY_MAX_MS, &cfg->jitter_ms);
    case 'S': return number_arg("status", arg, 200, 599, &cfg->status);
    case 'B': return number_arg("body-size", arg, 0, RESP_SIZE_MAX, &cfg->body_size);
    case 'T': return number_arg("threads", arg, 1, THREADS_MAX, &cfg->threads);
    case 'a': return number_arg("stall-at-ms", arg, 0, LATENCY_MAX_MS, &cfg->stall_at_ms);
    case 'd': return number_arg("stall-ms", arg, 0, LATENCY_MAX_MS, &cfg->stall_ms);
    case 'm': return number_arg("h2-max-streams", arg, 1, H2_STREAMS_MAX, &cfg->h2_max_streams);
    case 'g': return number_arg("h2-goaway-after", arg, 1, 1000000000ul, &cfg->h2_goaway_after);
    case '2': cfg->http2 = true; return 0;
    case 'p': cfg->port_file = arg; return 0;
    case 'q': cfg->quiet = true; return 0;
    default: return LC_EINVAL;
    }
}

/* Returns 0 to run, 1 after --help, or LC_EINVAL (the message already printed). */
static int parse_args(int argc, char **argv, config_t *cfg)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},       {"latency-ms", required_argument, NULL, 'L'},
        {"latency-jitter-ms", required_argument, NULL, 'J'}, {"status", required_argument, NULL, 'S'},
        {"body-size", required_argument, NULL, 'B'},    {"threads", required_argument, NULL, 'T'},
        {"stall-at-ms", required_argument, NULL, 'a'},  {"stall-ms", required_argument, NULL, 'd'},
        {"port-file", required_argument, NULL, 'p'},    {"quiet", no_argument, NULL, 'q'},
        {"http2", no_argument, NULL, '2'},              {"h2-max-streams", required_argument, NULL, 'm'},
        {"h2-goaway-after", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0}};
    bool stall_at = false, h2_knob = false;
    int opt;
    *cfg = (config_t){.status = 200, .body_size = 64, .threads = 1,
                      .h2_max_streams = H2_STREAMS_DEFAULT};
    if (listen_arg("127.0.0.1:8080", &cfg->listen) != 0)
        return LC_EINVAL;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 'h')
            return 1;
        stall_at |= opt == 'a';
        h2_knob |= opt == 'm' || opt == 'g';
        if (opt == '?' || apply_option(cfg, opt, optarg) != 0)
            return LC_EINVAL;
    }
    if (optind < argc) {
        fprintf(stderr, "lc_target: unexpected argument '%s'\n", argv[optind]);
        return LC_EINVAL;
    }
    if (h2_knob && !cfg->http2) {
        fprintf(stderr, "lc_target: --h2-max-streams and --h2-goaway-after need --http2\n");
        return LC_EINVAL;
    }
    if (stall_at != (cfg->stall_ms > 0)) {
        fprintf(stderr, "lc_target: --stall-at-ms and --stall-ms (> 0) go together\n");
        return LC_EINVAL;
    }
    return 0;
}

/* Runs the engines until SIGTERM/SIGINT, then joins them. */
static int serve(target_t *t, char *errmsg, size_t errlen)
{
    int rv = uv_loop_init(&t->loop);
    if (rv == 0 && (rv = uv_signal_init(&t->loop, &t->sigterm)) == 0 &&
        (rv = uv_signal_init(&t->loop, &t->sigint)) == 0) {
        t->sigterm.data = t->sigint.data = t;
        uv_signal_start(&t->sigterm, on_signal, SIGTERM);
        uv_signal_start(&t->sigint, on_signal, SIGINT);
    }
    for (unsigned i = 0; rv == 0 && i < t->nengines; i++)
        rv = pthread_create(&t->engines[i]->thread, NULL, engine_run, t->engines[i]);
    if (rv != 0) {
        snprintf(errmsg, errlen, "start: %s", rv > 0 ? strerror(rv) : uv_strerror(rv));
        return LC_EIO; /* main exits; the kernel reclaims the rest */
    }
    uv_run(&t->loop, UV_RUN_DEFAULT);
    uv_loop_close(&t->loop);
    for (unsigned i = 0; i < t->nengines; i++)
        pthread_join(t->engines[i]->thread, NULL);
    return 0;
}

static void target_free(target_t *t)
{
    for (unsigned i = 0; i < t->nengines; i++) {
        uv_loop_close(&t->engines[i]->loop);
        free(t->engines[i]);
    }
    stats_free(t);
    free(t);
}

int main(int argc, char **argv)
{
    char errmsg[512];
    target_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return 1;
    int rv = parse_args(argc, argv, &t->cfg);
    if (rv != 0) {
        rv == 1 ? usage(stdout) : (void)fputs("lc_target: try --help\n", stderr);
        free(t);
        return rv == 1 ? 0 : 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (app_key_init(&t->app_key) != 0) {
        fprintf(stderr, "lc_target: no random bytes for the app's key\n");
        free(t);
        return 1;
    }
    conn_prepare_responses(t);
    if ((rv = engines_start(t, errmsg, sizeof errmsg)) != 0 ||
        (t->cfg.port_file != NULL &&
         (rv = write_port_file(t->cfg.port_file, t->cfg.listen.port, errmsg, sizeof errmsg)) != 0)) {
        fprintf(stderr, "lc_target: %s\n", errmsg);
        return rv == LC_EINVAL ? 2 : 1; /* a bad --listen address is a usage error */
    }
    if (!t->cfg.quiet)
        fprintf(stderr, "lc_target: listening on %s:%u threads=%lu%s\n", t->cfg.listen.host,
                t->cfg.listen.port, t->cfg.threads, t->cfg.http2 ? " http2=h2c" : "");
    if (serve(t, errmsg, sizeof errmsg) != 0) {
        fprintf(stderr, "lc_target: %s\n", errmsg);
        return 1;
    }
    char *json = stats_json(t);
    printf("%s\n", json ? json : "{}");
    fflush(stdout);
    free(json);
    target_free(t);
    return 0;
}
