/* sysinfo.c — worker id, file limits, source addresses, CPU and memory of this process. */
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lc_clock.h"
#include "lc_err.h"

uint64_t worker_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX : (uint64_t)rl.rlim_cur;
}

uint64_t worker_fd_room(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    uint64_t cur = rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX : (uint64_t)rl.rlim_cur;
    return cur > WORKER_FD_RESERVE ? cur - WORKER_FD_RESERVE : 0;
}

/* --source-addrs: written once by main() before any engine starts, read-only
 * afterwards; only the round-robin cursor moves (once per connect). */
static struct sockaddr_storage source_addrs[WORKER_SOURCE_ADDRS_MAX];
static size_t n_source_addrs;
static atomic_size_t source_cursor;

static socklen_t sockaddr_len(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Whether this machine can bind ss: 0 or an errno. */
static int try_bind(const struct sockaddr_storage *ss)
{
    int one = 1, fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    int err = bind(fd, (const struct sockaddr *)ss, sockaddr_len(ss)) == 0 ? 0 : errno;
    close(fd);
    return err;
}

/* One list element (len bytes at text) into source_addrs[n_source_addrs]. */
static int add_source(const char *text, size_t len, char *errmsg, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN + 32];
    struct sockaddr_storage *ss = &source_addrs[n_source_addrs];
    if (len == 0 || len >= sizeof addr)
        return lc_errf(errmsg, errlen, LC_EINVAL,
                       "--source-addrs: '%.*s' is not an IPv4 or IPv6 address",
                       (int)(len < 200 ? len : 200), text);
    memcpy(addr, text, len);
    addr[len] = '\0';
    memset(ss, 0, sizeof *ss);
    if (uv_ip4_addr(addr, 0, (struct sockaddr_in *)ss) != 0 &&
        uv_ip6_addr(addr, 0, (struct sockaddr_in6 *)ss) != 0) {
        return lc_errf(errmsg, errlen, LC_EINVAL,
                       "--source-addrs: '%s' is not an IPv4 or IPv6 address", addr);
    }
    int err = try_bind(ss);
    if (err != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "--source-addrs: cannot bind %s: %s", addr,
                       strerror(err));
    n_source_addrs++;
    return 0;
}

int worker_source_addrs_set(const char *list, char *errmsg, size_t errlen)
{
    n_source_addrs = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        if (n_source_addrs == WORKER_SOURCE_ADDRS_MAX)
            return lc_errf(errmsg, errlen, LC_EINVAL, "--source-addrs: more than %d addresses",
                           WORKER_SOURCE_ADDRS_MAX);
        int rv = add_source(p, len, errmsg, errlen);
        if (rv != 0) {
            n_source_addrs = 0;
            return rv;
        }
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

const struct sockaddr *worker_source_addr_next(int family)
{
    for (size_t tries = 0; tries < n_source_addrs; tries++) {
        size_t i = atomic_fetch_add_explicit(&source_cursor, 1, memory_order_relaxed) %
                   n_source_addrs;
        if (source_addrs[i].ss_family == family)
            return (const struct sockaddr *)&source_addrs[i];
    }
    return NULL;
}

int worker_source_bind(uv_tcp_t *tcp, const struct sockaddr *src)
{
    uv_os_fd_t fd;
    int one = 1;
    /* Without this, bind() picks the port before the destination is known and
     * each source address gives at most one port range for all targets. */
    if (uv_fileno((const uv_handle_t *)tcp, &fd) == 0)
        (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    return uv_tcp_bind(tcp, src, 0);
}

static int valid_id(const char *s)
{
    if (strlen(s) != 32)
        return 0;
    for (int i = 0; i < 32; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int create_id(const char *path, char out[33], char *errmsg, size_t errlen)
{
    uint8_t raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return lc_errf(errmsg, errlen, LC_EIO, "getrandom: %s", strerror(errno));
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", out) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        return lc_errf(errmsg, errlen, LC_EIO, "write %s: %s", path, strerror(errno));
    return 0;
}

int worker_id_load(const char *data_dir, char out[33], char *errmsg, size_t errlen)
{
    char path[4096];
    if (mkdir(data_dir, 0755) != 0 && errno != EEXIST)
        return lc_errf(errmsg, errlen, LC_EIO, "mkdir %s: %s", data_dir, strerror(errno));
    snprintf(path, sizeof path, "%s/worker-id", data_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return create_id(path, out, errmsg, errlen);
    char line[64] = "";
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (got == NULL || !valid_id(line))
        return lc_errf(errmsg, errlen, LC_EIO, "%s: expected 32 hex digits", path);
    memcpy(out, line, 33);
    return 0;
}

int worker_seq_epoch_next(const char *data_dir, uint64_t *out, char *errmsg, size_t errlen)
{
    char path[4096], tmp[4200];
    unsigned long long last = 0;
    snprintf(path, sizeof path, "%s/batch-epoch", data_dir);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        int got = fscanf(f, "%llu", &last);
        fclose(f);
        if (got != 1 || last >= UINT32_MAX)
            return lc_errf(errmsg, errlen, LC_EIO, "%s: expected a number below 2^32", path);
    } else if (errno != ENOENT) {
        return lc_errf(errmsg, errlen, LC_EIO, "open %s: %s", path, strerror(errno));
    }
    /* Written and synced before any batch of this start goes out. */
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char line[32];
    int n = snprintf(line, sizeof line, "%llu\n", last + 1);
    bool ok = fd >= 0 && write(fd, line, (size_t)n) == n && fsync(fd) == 0;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        return lc_errf(errmsg, errlen, LC_EIO, "write %s: %s", path, strerror(errno));
    *out = last + 1;
    return 0;
}

static uint64_t cpu_us(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

void worker_cpu_init(worker_cpu_t *c, uint64_t polled_ns)
{
    c->last_wall_ns = lc_mono_ns();
    c->last_cpu_us = cpu_us();
    c->last_polled_ns = polled_ns;
}

double worker_cpu_percent(worker_cpu_t *c, unsigned threads, uint64_t polled_ns)
{
    uint64_t wall = lc_mono_ns(), cpu = cpu_us();
    double dwall_us = (double)(wall - c->last_wall_ns) / 1000.0;
    double dcpu = (double)(cpu - c->last_cpu_us);
    double dpolled_us = (double)(polled_ns - c->last_polled_ns) / 1000.0;
    c->last_wall_ns = wall;
    c->last_cpu_us = cpu;
    c->last_polled_ns = polled_ns;
    if (dwall_us <= 0 || threads == 0)
        return 0;
    /* Polling is timed by the wall clock, CPU by the kernel's ticks: never below 0. */
    double busy = dcpu > dpolled_us ? dcpu - dpolled_us : 0;
    return busy / (dwall_us * threads) * 100.0;
}

uint64_t worker_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size, rss;
    if (f == NULL)
        return 0;
    int n = fscanf(f, "%llu %llu", &size, &rss);
    fclose(f);
    return n == 2 ? rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}
