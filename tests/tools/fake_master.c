/* fake_master.c — a misbehaving master for tests: accepts worker connections,
 * reads their Hello, answers with a garbage frame and closes; it prints one
 * line per connection so a test can see the worker reconnect. */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: lc_fake_master --port-file FILE [--connections N] [--timeout S] [--mode MODE]\n"
    "  MODE: garbage (a frame whose body is not an Envelope, default),\n"
    "        oversize (a length prefix of 1 GiB), badvarint (6-byte prefix)\n";

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    *port = ntohs(sa.sin_port);
    return fd;
}

static void misbehave(int fd, const char *mode)
{
    char buf[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 2000) > 0)
        (void)read(fd, buf, sizeof buf); /* the worker's Hello */
    static const unsigned char garbage[] = {0x05, 0xde, 0xad, 0xbe, 0xef, 0xff};
    static const unsigned char oversize[] = {0x80, 0x80, 0x80, 0x80, 0x04};
    static const unsigned char badvarint[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    const unsigned char *out = garbage;
    size_t n = sizeof garbage;
    if (strcmp(mode, "oversize") == 0) {
        out = oversize;
        n = sizeof oversize;
    } else if (strcmp(mode, "badvarint") == 0) {
        out = badvarint;
        n = sizeof badvarint;
    }
    (void)write(fd, out, n);
    /* Keep the connection open: the worker must close it on its own. */
    if (poll(&p, 1, 3000) > 0)
        (void)read(fd, buf, sizeof buf);
}

int main(int argc, char **argv)
{
    const char *port_file = NULL, *mode = "garbage";
    int want = 2, timeout_s = 30, opt;
    static const struct option opts[] = {{"port-file", required_argument, NULL, 'p'},
                                         {"connections", required_argument, NULL, 'n'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"mode", required_argument, NULL, 'm'},
                                         {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': port_file = optarg; break;
        case 'n': want = atoi(optarg); break;
        case 't': timeout_s = atoi(optarg); break;
        case 'm': mode = optarg; break;
        default: fputs(usage, stderr); return 2;
        }
    }
    int port, lfd = listen_loopback(&port);
    if (port_file == NULL || lfd < 0) {
        fputs(usage, stderr);
        return 2;
    }
    FILE *pf = fopen(port_file, "w");
    if (pf == NULL)
        return 2;
    fprintf(pf, "%d\n", port);
    fclose(pf);
    time_t deadline = time(NULL) + timeout_s;
    for (int seen = 0; seen < want && time(NULL) < deadline;) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        printf("connection %d\n", ++seen);
        fflush(stdout);
        misbehave(fd, mode);
        close(fd);
    }
    close(lfd);
    return 0;
}
