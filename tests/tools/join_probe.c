/* join_probe.c — a worker impostor for tests of the join challenge: answers
 * with a replayed proof, no proof, or garbage, and prints what the master
 * did ("welcomed", "refused: <reason>", "closed"). */
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "lc_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"

static const char usage[] =
    "usage: lc_join_probe --connect IP:PORT --mode replay|none|garbage [--secret-file F]\n"
    "  replay: answer the second challenge with the proof made for the first\n"
    "  none: send Hello without a proof; garbage: send bytes that are no frame\n";

static int dial(const char *address)
{
    lc_hostport_t hp;
    char why[128];
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (lc_hostport_parse(address, 0, &hp, why, sizeof why) != 0 ||
        inet_pton(AF_INET, hp.host, &sa.sin_addr) != 1)
        return -1;
    sa.sin_port = htons(hp.port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int keep_first(void *arg, const uint8_t *body, size_t len)
{
    Lc__Envelope **out = arg;
    char why[128];
    if (*out == NULL && lc_frame_decode(body, len, out, why, sizeof why) != 0)
        *out = NULL;
    return 1; /* one frame is enough */
}

/* The next envelope from fd within 3 s, or NULL (closed, timeout, garbage). */
static Lc__Envelope *next_frame(int fd, lc_frame_reader_t *r)
{
    Lc__Envelope *env = NULL;
    uint8_t buf[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (env == NULL && poll(&p, 1, 3000) > 0) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0 || lc_frame_reader_feed(r, buf, (size_t)n, keep_first, &env) == LC_EPROTO)
            break;
    }
    return env;
}

static void send_hello(int fd, const uint8_t *proof, size_t proof_len)
{
    Lc__Hello hello = LC__HELLO__INIT;
    hello.protocol_version = LC_PROTOCOL_VERSION;
    hello.worker_id = "join-probe";
    hello.name = "join-probe";
    hello.threads = 1;
    hello.join_proof.data = (uint8_t *)proof;
    hello.join_proof.len = proof_len;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    uint8_t *frame;
    size_t len;
    if (lc_frame_encode(&env, &frame, &len) == 0) {
        (void)write(fd, frame, len);
        free(frame);
    }
}

/* Prints what the master answered to our Hello. */
static void report(int fd, lc_frame_reader_t *r)
{
    Lc__Envelope *env = next_frame(fd, r);
    if (env != NULL && env->msg_case == LC__ENVELOPE__MSG_WELCOME)
        printf("welcomed\n");
    else if (env != NULL && env->msg_case == LC__ENVELOPE__MSG_JOIN_REFUSED)
        printf("refused: %s\n", env->join_refused->reason);
    else
        printf("closed\n");
    if (env != NULL)
        lc__envelope__free_unpacked(env, NULL);
}

/* The proof of one connection's challenge (replay's first half). */
static int first_proof(const char *address, const lc_join_secret_t *secret, uint8_t *proof)
{
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    int fd = dial(address), rv = -1;
    Lc__Envelope *env = fd >= 0 ? next_frame(fd, &r) : NULL;
    if (env != NULL && env->msg_case == LC__ENVELOPE__MSG_CHALLENGE)
        rv = lc_join_proof_for(secret, env->challenge->nonce.data, env->challenge->nonce.len,
                               "join-probe", proof);
    if (env != NULL)
        lc__envelope__free_unpacked(env, NULL);
    if (fd >= 0)
        close(fd);
    lc_frame_reader_close(&r);
    return rv;
}

int main(int argc, char **argv)
{
    const char *address = NULL, *mode = NULL, *secret_file = NULL;
    static const struct option opts[] = {{"connect", required_argument, NULL, 'c'},
                                         {"mode", required_argument, NULL, 'm'},
                                         {"secret-file", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    for (int opt; (opt = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (opt == 'c') address = optarg;
        else if (opt == 'm') mode = optarg;
        else if (opt == 's') secret_file = optarg;
        else { fputs(usage, stderr); return 2; }
    }
    lc_join_secret_t secret = {0};
    char why[256];
    uint8_t proof[LC_JOIN_PROOF_LEN];
    if (address == NULL || mode == NULL ||
        (secret_file && lc_join_secret_load(secret_file, &secret, why, sizeof why) != 0)) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(mode, "replay") == 0 && first_proof(address, &secret, proof) != 0) {
        fprintf(stderr, "lc_join_probe: no first challenge\n");
        return 1;
    }
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    int fd = dial(address);
    if (fd < 0) {
        fprintf(stderr, "lc_join_probe: cannot connect to %s\n", address);
        return 1;
    }
    Lc__Envelope *challenge = next_frame(fd, &r);
    if (challenge != NULL)
        lc__envelope__free_unpacked(challenge, NULL);
    if (strcmp(mode, "garbage") == 0)
        (void)write(fd, "\x07garbage-bytes\xff\xff", 16);
    else
        send_hello(fd, proof, strcmp(mode, "replay") == 0 ? sizeof proof : 0);
    report(fd, &r);
    close(fd);
    lc_frame_reader_close(&r);
    return 0;
}
