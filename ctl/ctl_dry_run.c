/* ctl_dry_run.c — runs the dry run's trace through a local loadworker. */
#include "ctl_dry_run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The loadworker beside /proc/self/exe, or "loadworker" (searched on PATH). */
static void worker_path(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    snprintf(out, len, "loadworker");
    if (n <= 0)
        return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    size_t dir = strlen(self);
    if (dir + sizeof "/loadworker" > len)
        return;
    memcpy(out, self, dir);
    memcpy(out + dir, "/loadworker", sizeof "/loadworker");
    if (access(out, X_OK) != 0)
        snprintf(out, len, "loadworker");
}

static int write_scenario(const json_t *scenario, char *path, size_t len)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, len, "%s/loadctl-dry-run.XXXXXX", dir);
    int fd = mkstemp(path); /* 0600: the scenario may carry credentials */
    if (fd < 0) {
        fprintf(stderr, "loadctl: cannot create a temporary file in %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rv = json_dumpfd(scenario, fd, JSON_COMPACT);
    if (close(fd) != 0 || rv != 0) {
        fprintf(stderr, "loadctl: cannot write %s\n", path);
        unlink(path);
        return -1;
    }
    return 0;
}

int ctl_dry_run(const json_t *scenario)
{
    char file[PATH_MAX], worker[PATH_MAX];
    if (scenario == NULL || write_scenario(scenario, file, sizeof file) != 0)
        return 1;
    worker_path(worker, sizeof worker);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execlp(worker, worker, "--local", file, "--trace", (char *)NULL);
        fprintf(stderr, "loadctl: cannot run %s (the dry run needs loadworker): %s\n", worker,
                strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    unlink(file);
    if (pid < 0) {
        fprintf(stderr, "loadctl: cannot start loadworker: %s\n", strerror(errno));
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
