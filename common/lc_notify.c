/* lc_notify.c — systemd's notification protocol: sd_notify, or one datagram to $NOTIFY_SOCKET. */
#include "lc_notify.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef LC_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "lc_err.h"
#include "lc_log.h"

/* Long enough for any status we send; longer ones are cut, not refused. */
#define MESSAGE_MAX 512

int lc_notify_send_socket(const char *message)
{
    const char *name = getenv("NOTIFY_SOCKET");
    if (name == NULL || name[0] == '\0')
        return 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t len = strlen(name);
    bool abstract = name[0] == '@';
    /* A path needs room for its NUL; an abstract name is counted by the length alone. */
    if ((!abstract && name[0] != '/') || len < 2 || len > sizeof sa.sun_path - (abstract ? 0 : 1)) {
        errno = EINVAL;
        return LC_EINVAL;
    }
    memcpy(sa.sun_path, name, len);
    if (abstract)
        sa.sun_path[0] = '\0';
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (abstract ? 0 : 1));

    /* Non-blocking: a daemon's event loop must never wait on systemd. */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return LC_EIO;
    size_t mlen = strlen(message);
    ssize_t n = sendto(fd, message, mlen, MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
    int err = errno;
    close(fd);
    errno = err;
    return n == (ssize_t)mlen ? 0 : LC_EIO;
}

int lc_notify_send(const char *message)
{
    const char *name = getenv("NOTIFY_SOCKET");
    if (name == NULL || name[0] == '\0')
        return 0;
#ifdef LC_HAVE_LIBSYSTEMD
    /* sd_notify: > 0 sent, 0 no $NOTIFY_SOCKET, < 0 a negative errno. */
    int r = sd_notify(0, message);
    if (r >= 0)
        return 0;
    errno = -r;
    return r == -EINVAL || r == -EAFNOSUPPORT ? LC_EINVAL : LC_EIO;
#else
    return lc_notify_send_socket(message);
#endif
}

/* Sends head, then "STATUS=<status>" on its own line when status is given. */
static void notify(const char *head, const char *status)
{
    const char *socket_name = getenv("NOTIFY_SOCKET");
    if (socket_name == NULL || socket_name[0] == '\0')
        return;
    char msg[MESSAGE_MAX];
    size_t n = (size_t)snprintf(msg, sizeof msg, "%s%s", head,
                                status == NULL ? "" : head[0] != '\0' ? "\nSTATUS=" : "STATUS=");
    for (const char *p = status; p != NULL && *p != '\0' && n < sizeof msg - 1; p++)
        msg[n++] = *p == '\n' ? ' ' : *p;
    msg[n] = '\0';
    if (n == 0)
        return; /* lc_notify_status(NULL): nothing to say */
    int rv = lc_notify_send(msg);
    if (rv != 0)
        lc_warn("notify", "msg=\"cannot notify systemd\" socket=\"%s\" error=\"%s: %s\"",
                socket_name, lc_strerror(rv), strerror(errno));
}

void lc_notify_ready(const char *status)
{
    notify("READY=1", status);
}

void lc_notify_stopping(void)
{
    notify("STOPPING=1", NULL);
}

void lc_notify_status(const char *status)
{
    notify("", status);
}
