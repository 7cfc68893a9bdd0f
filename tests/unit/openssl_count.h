/* openssl_count.h — for unit tests of the worker's TLS memory: an allocator for OpenSSL
 * (CRYPTO_set_mem_functions) whose blocks carry their size and whether the test's own thread
 * (the client's) allocated them, so that openssl_count_live leaves the server's threads out. */
#ifndef TESTS_UNIT_OPENSSL_COUNT_H
#define TESTS_UNIT_OPENSSL_COUNT_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

typedef struct openssl_count_hdr_s {
    size_t size;
    size_t counted;
} openssl_count_hdr_t;
_Static_assert(sizeof(openssl_count_hdr_t) == 16, "keeps malloc's alignment");

static pthread_t openssl_count_thread;
static long openssl_count_live; /* bytes OpenSSL holds for the counted thread */

static inline void *openssl_count_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    openssl_count_hdr_t *h = malloc(sizeof *h + n);
    if (h == NULL)
        return NULL;
    h->size = n;
    h->counted = pthread_equal(pthread_self(), openssl_count_thread);
    if (h->counted)
        __atomic_add_fetch(&openssl_count_live, (long)n, __ATOMIC_RELAXED);
    return h + 1;
}

static inline void openssl_count_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    if (p == NULL)
        return;
    openssl_count_hdr_t *h = (openssl_count_hdr_t *)p - 1;
    if (h->counted)
        __atomic_sub_fetch(&openssl_count_live, (long)h->size, __ATOMIC_RELAXED);
    free(h);
}

static inline void *openssl_count_realloc(void *p, size_t n, const char *file, int line)
{
    if (p == NULL)
        return openssl_count_malloc(n, file, line);
    openssl_count_hdr_t *old = (openssl_count_hdr_t *)p - 1;
    void *q = openssl_count_malloc(n, file, line);
    if (q == NULL)
        return NULL;
    memcpy(q, p, old->size < n ? old->size : n);
    openssl_count_free(p, file, line);
    return q;
}

/* Counts what OpenSSL allocates on the calling thread from now on; before OpenSSL's first
 * allocation only. Returns 0, or -1 (OpenSSL allocated already). */
static inline int openssl_count_start(void)
{
    openssl_count_thread = pthread_self();
    return CRYPTO_set_mem_functions(openssl_count_malloc, openssl_count_realloc,
                                    openssl_count_free) == 1 ? 0 : -1;
}

#endif
