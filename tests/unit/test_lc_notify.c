/* test_lc_notify.c — unit tests for common/lc_notify.c: exact datagrams on a real
 * $NOTIFY_SOCKET (path and abstract), the sender's pid, and no-ops without one. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_notify.h"

/* A datagram socket standing in for systemd's notification socket. */
typedef struct listener_s {
    int fd;
    char dir[64];        /* temp dir of a path socket, "" for an abstract one */
    char env_name[100];  /* the value of $NOTIFY_SOCKET */
} listener_t;

static void listener_bind(listener_t *l, struct sockaddr_un *sa, socklen_t salen)
{
    l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(l->fd >= 0);
    int one = 1; /* systemd reads the sender's credentials like this */
    assert_int_equal(setsockopt(l->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one), 0);
    if (bind(l->fd, (struct sockaddr *)sa, salen) != 0)
        fail_msg("bind %s: %s", l->env_name, strerror(errno));
    assert_int_equal(setenv("NOTIFY_SOCKET", l->env_name, 1), 0);
}

static int path_setup(void **state)
{
    listener_t *l = calloc(1, sizeof *l);
    snprintf(l->dir, sizeof l->dir, "/tmp/lc-notify.XXXXXX");
    assert_non_null(mkdtemp(l->dir));
    snprintf(l->env_name, sizeof l->env_name, "%s/notify", l->dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", l->env_name);
    listener_bind(l, &sa, sizeof sa);
    *state = l;
    return 0;
}

static int abstract_setup(void **state)
{
    listener_t *l = calloc(1, sizeof *l);
    snprintf(l->env_name, sizeof l->env_name, "@lc-notify-test-%ld-%d", (long)getpid(), rand());
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(l->env_name);
    memcpy(sa.sun_path, l->env_name, len);
    sa.sun_path[0] = '\0';
    listener_bind(l, &sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    *state = l;
    return 0;
}

static int listener_teardown(void **state)
{
    listener_t *l = *state;
    close(l->fd);
    if (l->dir[0] != '\0') {
        char path[160];
        snprintf(path, sizeof path, "%s/notify", l->dir);
        unlink(path);
        rmdir(l->dir);
    }
    unsetenv("NOTIFY_SOCKET");
    free(l);
    return 0;
}

/* The next datagram (already queued: sending is synchronous), with its sender's pid. */
static void expect_message(listener_t *l, const char *want, pid_t *sender)
{
    char buf[1024];
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec iov = {buf, sizeof buf - 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                        .msg_controllen = sizeof control};
    ssize_t n = recvmsg(l->fd, &mh, MSG_DONTWAIT);
    if (n < 0)
        fail_msg("no datagram on %s (want \"%s\"): %s", l->env_name, want, strerror(errno));
    buf[n] = '\0';
    assert_string_equal(buf, want);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    assert_non_null(c);
    assert_int_equal(c->cmsg_type, SCM_CREDENTIALS);
    struct ucred cred;
    memcpy(&cred, CMSG_DATA(c), sizeof cred);
    if (sender != NULL)
        *sender = cred.pid;
}

static void expect_nothing(listener_t *l)
{
    char buf[64];
    assert_int_equal(recv(l->fd, buf, sizeof buf, MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/* The public calls, through whichever path the build chose (sd_notify or our own). */
static void exercise_api(listener_t *l)
{
    pid_t sender;
    lc_notify_ready("leader, term 3, 2 workers");
    expect_message(l, "READY=1\nSTATUS=leader, term 3, 2 workers", &sender);
    assert_int_equal(sender, getpid());
    lc_notify_ready(NULL);
    expect_message(l, "READY=1", NULL);
    lc_notify_status("follower of 2");
    expect_message(l, "STATUS=follower of 2", NULL);
    lc_notify_status("two\nlines"); /* must not smuggle in a second field */
    expect_message(l, "STATUS=two lines", NULL);
    lc_notify_stopping();
    expect_message(l, "STOPPING=1", NULL);
    lc_notify_status(NULL); /* nothing to send */
    expect_nothing(l);
}

static void test_path_socket(void **state)
{
    exercise_api(*state);
}

static void test_abstract_socket(void **state)
{
    exercise_api(*state);
}

/* The fallback implementation, exercised even when the build uses libsystemd. */
static void exercise_fallback(void **state)
{
    listener_t *l = *state;
    assert_int_equal(lc_notify_send_socket("READY=1\nSTATUS=x"), 0);
    expect_message(l, "READY=1\nSTATUS=x", NULL);
    assert_int_equal(lc_notify_send_socket("STOPPING=1"), 0);
    expect_message(l, "STOPPING=1", NULL);
    assert_int_equal(lc_notify_send("STATUS=y"), 0);
    expect_message(l, "STATUS=y", NULL);
    expect_nothing(l);
}

static void test_fallback_path(void **state)
{
    exercise_fallback(state);
}

static void test_fallback_abstract(void **state)
{
    exercise_fallback(state);
}

static void *send_from_thread(void *arg)
{
    (void)arg;
    lc_notify_status("from a thread");
    return NULL;
}

/* NotifyAccess=main accepts only the main pid: a message sent by another
 * thread of the daemon (the worker's control thread) carries that pid too. */
static void test_thread_sends_main_pid(void **state)
{
    listener_t *l = *state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_from_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pid_t sender = 0;
    expect_message(l, "STATUS=from a thread", &sender);
    assert_int_equal(sender, getpid());
}

static void test_long_status_is_cut(void **state)
{
    listener_t *l = *state;
    char status[2000];
    memset(status, 'a', sizeof status - 1);
    status[sizeof status - 1] = '\0';
    lc_notify_status(status);
    char buf[1024];
    ssize_t n = recv(l->fd, buf, sizeof buf, MSG_DONTWAIT);
    assert_true(n > 100 && n < 1024);
    assert_memory_equal(buf, "STATUS=aaa", 10);
}

static void test_unset_is_noop(void **state)
{
    listener_t *l = *state;
    unsetenv("NOTIFY_SOCKET");
    lc_notify_ready("x");
    lc_notify_status("x");
    lc_notify_stopping();
    assert_int_equal(lc_notify_send("READY=1"), 0);
    assert_int_equal(lc_notify_send_socket("READY=1"), 0);
    setenv("NOTIFY_SOCKET", "", 1);
    lc_notify_ready("x");
    assert_int_equal(lc_notify_send("READY=1"), 0);
    assert_int_equal(lc_notify_send_socket("READY=1"), 0);
    expect_nothing(l);
}

static void test_bad_socket_names(void **state)
{
    const char *bad[] = {"relative/notify", "@", "/", "vsock:2:1234"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("NOTIFY_SOCKET", bad[i], 1);
        assert_int_equal(lc_notify_send_socket("READY=1"), LC_EINVAL);
        assert_int_equal(lc_notify_send("READY=1"), LC_EINVAL);
    }
    char longname[200] = "/";
    memset(longname + 1, 'x', sizeof longname - 2);
    longname[sizeof longname - 1] = '\0';
    setenv("NOTIFY_SOCKET", longname, 1);
    assert_int_equal(lc_notify_send_socket("READY=1"), LC_EINVAL);
    /* Nobody listens there: an I/O error, reported and otherwise harmless. */
    setenv("NOTIFY_SOCKET", "/nonexistent/lc-notify", 1);
    assert_int_equal(lc_notify_send_socket("READY=1"), LC_EIO);
    assert_int_equal(lc_notify_send("READY=1"), LC_EIO);
    lc_notify_ready("nobody listens"); /* logs a warning, returns */
    unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_path_socket, path_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_abstract_socket, abstract_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_fallback_path, path_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_fallback_abstract, abstract_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_thread_sends_main_pid, path_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_long_status_is_cut, abstract_setup, listener_teardown),
        cmocka_unit_test_setup_teardown(test_unset_is_noop, path_setup, listener_teardown),
        cmocka_unit_test(test_bad_socket_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
