/* lc_notify.h — systemd readiness notifications (Type=notify): ready, status, stopping. */
#ifndef LC_NOTIFY_H
#define LC_NOTIFY_H

/* All three are best effort and no-ops when $NOTIFY_SOCKET is unset (not run
 * by systemd); a failed send is logged as a warning and otherwise ignored.
 * A newline in status is sent as a blank (it would start a new field). */

/* "READY=1\nSTATUS=<status>", or "READY=1" when status is NULL. Call it once
 * the listeners are bound: systemd starts units ordered after this one then. */
void lc_notify_ready(const char *status);
/* "STOPPING=1": shutdown has begun (shown as "deactivating"). */
void lc_notify_stopping(void);
/* "STATUS=<status>": one line shown by `systemctl status`. */
void lc_notify_status(const char *status);

/* Sends one message (KEY=VALUE lines) to $NOTIFY_SOCKET, through libsystemd's
 * sd_notify when the build has it (LC_HAVE_LIBSYSTEMD). Returns 0 when sent or
 * when $NOTIFY_SOCKET is unset, LC_EINVAL for a socket name that is neither
 * an absolute path nor '@'-abstract, LC_EIO when sending failed. */
int lc_notify_send(const char *message);
/* The same without libsystemd: one datagram to the AF_UNIX socket named by
 * $NOTIFY_SOCKET ('@' = abstract namespace). lc_notify_send's fallback, public
 * so that tests cover it in every build. */
int lc_notify_send_socket(const char *message);

#endif
