/* sysinfo.c — worker id, file limits, CPU and memory of this process. */
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
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
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        snprintf(errmsg, errlen, "getrandom: %s", strerror(errno));
        return LC_EIO;
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", out) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(errmsg, errlen, "write %s: %s", path, strerror(errno));
        return LC_EIO;
    }
    return 0;
}

int worker_id_load(const char *data_dir, char out[33], char *errmsg, size_t errlen)
{
    char path[4096];
    if (mkdir(data_dir, 0755) != 0 && errno != EEXIST) {
        snprintf(errmsg, errlen, "mkdir %s: %s", data_dir, strerror(errno));
        return LC_EIO;
    }
    snprintf(path, sizeof path, "%s/worker-id", data_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return create_id(path, out, errmsg, errlen);
    char line[64] = "";
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (got == NULL || !valid_id(line)) {
        snprintf(errmsg, errlen, "%s: expected 32 hex digits", path);
        return LC_EIO;
    }
    memcpy(out, line, 33);
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

void worker_cpu_init(worker_cpu_t *c)
{
    c->last_wall_ns = lc_mono_ns();
    c->last_cpu_us = cpu_us();
}

double worker_cpu_percent(worker_cpu_t *c, unsigned threads)
{
    uint64_t wall = lc_mono_ns(), cpu = cpu_us();
    double dwall_us = (double)(wall - c->last_wall_ns) / 1000.0;
    double dcpu = (double)(cpu - c->last_cpu_us);
    c->last_wall_ns = wall;
    c->last_cpu_us = cpu;
    if (dwall_us <= 0 || threads == 0)
        return 0;
    return dcpu / (dwall_us * threads) * 100.0;
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
