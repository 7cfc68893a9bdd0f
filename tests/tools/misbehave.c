/* misbehave.c — lc_misbehave: a loopback server that fails HTTP clients one way per mode. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 1024
#define REQ_MAX 8192

static const char usage[] =
    "usage: lc_misbehave --mode MODE [--port-file FILE] [--timeout S]\n"
    "  MODE: reset     read a request, then close with SO_LINGER 0 (an RST)\n"
    "        garbage   answer a request with bytes that are not HTTP\n"
    "        hang      read requests, never answer\n"
    "        blackhole listen with a full accept queue and never accept: SYNs are dropped\n"
    "        redirect  answer 302 Location: /followed; print one line per request path\n"
    "  --timeout S: exit after S seconds (default 120)\n";

enum mode { MODE_RESET, MODE_GARBAGE, MODE_HANG, MODE_BLACKHOLE, MODE_REDIRECT };

typedef struct client_s {
    char buf[REQ_MAX];
    size_t len;
} client_t;

static int parse_mode(const char *s, enum mode *out)
{
    static const char *const names[] = {"reset", "garbage", "hang", "blackhole", "redirect"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum mode)i;
            return 0;
        }
    return -1;
}

static int listen_loopback(int backlog, struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof *sa;
    *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof *sa) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)sa, &len) != 0)
        return -1;
    return fd;
}

/* Fills the accept queue of a listen(fd, 0) socket with our own connections:
 * Linux then drops every further SYN, so clients see their connect time out.
 * The second connect is non-blocking and never completes; it only makes sure
 * the queue stays full whichever way the kernel counts. */
static int fill_accept_queue(const struct sockaddr_in *sa, int fillers[2])
{
    for (int i = 0; i < 2; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | (i ? SOCK_NONBLOCK : 0), 0);
        if (fillers[i] < 0)
            return -1;
        if (connect(fillers[i], (const struct sockaddr *)sa, sizeof *sa) != 0 &&
            !(i == 1 && errno == EINPROGRESS))
            return -1;
    }
    return 0;
}

static void reset_close(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* One complete request head in c->buf: answers it per mode. Returns false
 * when the connection was closed. */
static int answer(int fd, client_t *c, enum mode m)
{
    static const char garbage[] = "\x16\x03\x01 this is not an HTTP response\r\n\r\n";
    static const char redirect[] = "HTTP/1.1 302 Found\r\nLocation: /followed\r\n"
                                   "Content-Length: 0\r\n\r\n";
    static const char followed[] = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nfollowed";
    char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    if (end == NULL)
        return 1;
    if (m == MODE_RESET) {
        reset_close(fd);
        return 0;
    }
    if (m == MODE_GARBAGE)
        write_all(fd, garbage, sizeof garbage - 1);
    if (m == MODE_REDIRECT) {
        char *sp = memchr(c->buf, ' ', c->len);
        char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(end - sp)) : NULL;
        int plen = sp && sp2 ? (int)(sp2 - sp - 1) : 0;
        printf("request %.*s\n", plen, sp ? sp + 1 : "");
        fflush(stdout);
        int to_followed = plen == 9 && memcmp(sp + 1, "/followed", 9) == 0;
        write_all(fd, to_followed ? followed : redirect,
                  to_followed ? sizeof followed - 1 : sizeof redirect - 1);
    }
    /* hang: the request is read and forgotten. Requests carry no body here. */
    size_t used = (size_t)(end + 4 - c->buf);
    memmove(c->buf, c->buf + used, c->len - used);
    c->len -= used;
    return 1;
}

/* Data (or EOF) on client i. Returns false when it was closed. */
static int on_client(struct pollfd *p, client_t *c, enum mode m)
{
    if (c->len == sizeof c->buf)
        c->len = 0; /* an oversize head: forget it */
    ssize_t n = read(p->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n <= 0) {
        close(p->fd);
        return 0;
    }
    c->len += (size_t)n;
    return answer(p->fd, c, m);
}

static void serve(int lfd, enum mode m, time_t deadline)
{
    static struct pollfd fds[MAX_CLIENTS + 1];
    static client_t clients[MAX_CLIENTS + 1];
    nfds_t n = 1;
    fds[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
    while (time(NULL) < deadline) {
        fds[0].events = n <= MAX_CLIENTS ? POLLIN : 0; /* full: leave the rest queued */
        if (poll(fds, n, 200) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) {
                fds[n] = (struct pollfd){.fd = fd, .events = POLLIN};
                clients[n++].len = 0;
            }
        }
        for (nfds_t i = 1; i < n; i++) {
            if (fds[i].revents == 0 || on_client(&fds[i], &clients[i], m))
                continue;
            fds[i] = fds[n - 1]; /* closed: the last one takes its slot */
            clients[i] = clients[n - 1];
            fds[i].revents = 0; /* handled in a later round */
            n--;
            i--;
        }
    }
}

static int write_port(const char *path, int port)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%d\n", port);
    return fclose(f);
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    enum mode m = MODE_HANG;
    int timeout_s = 120, opt, have_mode = 0;
    static const struct option opts[] = {{"port-file", required_argument, NULL, 'p'},
                                         {"mode", required_argument, NULL, 'm'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': port_file = optarg; break;
        case 't': timeout_s = atoi(optarg); break;
        case 'm':
            if (parse_mode(optarg, &m) != 0) {
                fprintf(stderr, "lc_misbehave: unknown mode '%s'\n%s", optarg, usage);
                return 2;
            }
            have_mode = 1;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    struct sockaddr_in sa;
    int fillers[2], lfd = have_mode ? listen_loopback(m == MODE_BLACKHOLE ? 0 : 128, &sa) : -1;
    if (lfd < 0 || (m == MODE_BLACKHOLE && fill_accept_queue(&sa, fillers) != 0)) {
        fprintf(stderr, "lc_misbehave: %s\n%s", have_mode ? strerror(errno) : "--mode?", usage);
        return 2;
    }
    if (port_file != NULL && write_port(port_file, ntohs(sa.sin_port)) != 0) {
        fprintf(stderr, "lc_misbehave: %s: %s\n", port_file, strerror(errno));
        return 2;
    }
    time_t deadline = time(NULL) + timeout_s;
    if (m == MODE_BLACKHOLE) {
        while (time(NULL) < deadline)
            sleep(1); /* never accept */
        return 0;
    }
    serve(lfd, m, deadline);
    return 0;
}
