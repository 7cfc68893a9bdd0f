/* aio_destroy.c — interposes syscall(3) for this executable: raft_uv (Debian's libraft 0.15)
 * destroys each closed open-segment writer's AIO context with syscall(__NR_io_destroy), on
 * the loop, and Linux's io_destroy blocks until an RCU grace period has passed (the loop in
 * state D for 37-54 ms, kernel stack wait_for_completion <- __x64_sys_io_destroy, measured
 * with sched_switch events under bench-master). Raft never touches the context again after
 * the call, so the call can finish on a thread of its own. */
#include "aio_destroy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*syscall_fn)(long number, ...);

static atomic_bool off_loop;
static _Atomic uint64_t n_deferred, n_in_place;

/* libc's syscall(3), found once. */
static syscall_fn libc_syscall(void)
{
    static _Atomic(syscall_fn) next;
    syscall_fn fn = atomic_load(&next);
    if (fn == NULL) {
        fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
        atomic_store(&next, fn);
    }
    return fn;
}

static void *destroy_thread(void *arg)
{
    libc_syscall()(SYS_io_destroy, (long)(uintptr_t)arg);
    return NULL;
}

/* True when ctx's destruction was handed to a detached thread. */
static bool defer(long ctx)
{
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    bool started = pthread_create(&thread, &attr, destroy_thread, (void *)(uintptr_t)ctx) == 0;
    pthread_attr_destroy(&attr);
    return started;
}

/* Every caller's syscall(3) in this executable: up to six arguments, as the C library's, which
 * reads six whatever the caller passed; so does this, and the sixth is read from the caller's
 * stack where the C calling convention puts a seventh argument: not ASan's business. */
__attribute__((no_sanitize("address"))) long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_io_destroy && atomic_load(&off_loop)) {
        if (defer(a)) {
            atomic_fetch_add(&n_deferred, 1);
            return 0;
        }
        atomic_fetch_add(&n_in_place, 1);
    }
    return libc_syscall()(number, a, b, c, d, e, f);
}

void aio_destroy_off_loop(void)
{
    atomic_store(&off_loop, true);
}

uint64_t aio_destroy_deferred(void)
{
    return atomic_load(&n_deferred);
}

uint64_t aio_destroy_in_place(void)
{
    return atomic_load(&n_in_place);
}
