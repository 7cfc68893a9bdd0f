/* replay_main.c — the main() of a fuzz target in builds without libFuzzer:
 * runs LLVMFuzzerTestOneInput once over every file of the corpus directories
 * (or files) given as arguments, so ctest replays each corpus in seconds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target, as with libFuzzer. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Runs one input from a buffer of exactly its size, so that ASan catches a
 * read past its end as libFuzzer would. Returns 0, or -1 when unreadable. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of dir, in name order; adds them to *count. */
static int replay_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        /* git keeps no empty directory: a target without seeds yet passes. */
        fprintf(stderr, "replay: %s: no corpus, nothing to replay\n", dir);
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rv = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **bigger = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (bigger == NULL) {
                rv = -1;
                break;
            }
            names = bigger;
        }
        if ((names[n] = strdup(e->d_name)) == NULL) {
            rv = -1;
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (rv == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            fprintf(stderr, "replay: %s\n", path);
            if (replay_file(path) != 0)
                rv = -1;
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rv;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize != NULL)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    int rv = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rv |= replay_file(argv[i]);
            count++;
        } else {
            rv |= replay_dir(argv[i], &count);
        }
    }
    fprintf(stderr, "replay: %zu inputs, %s\n", count, rv == 0 ? "no failure" : "errors");
    return rv == 0 ? 0 : 1;
}
