/* scheduler.c — largest-remainder splitting of users over workers. */
#include "scheduler.h"

#include <stdlib.h>

void sched_split(uint32_t total, const uint32_t *weights, size_t n, uint32_t *out)
{
    uint64_t weight_sum = 0;
    for (size_t i = 0; i < n; i++)
        weight_sum += weights[i];
    uint64_t given = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = weight_sum ? weights[i] : 1;
        uint64_t sum = weight_sum ? weight_sum : n;
        out[i] = (uint32_t)((uint64_t)total * w / sum);
        given += out[i];
    }
    /* Hand out what rounding down left, largest remainder first. */
    while (given < total) {
        size_t best = 0;
        uint64_t best_rem = 0;
        int found = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t w = weight_sum ? weights[i] : 1;
            uint64_t sum = weight_sum ? weight_sum : n;
            uint64_t rem = ((uint64_t)total * w) % sum;
            /* A share that already got its extra user has remainder "used". */
            if (out[i] > (uint64_t)total * w / sum)
                continue;
            if (!found || rem > best_rem) {
                best = i;
                best_rem = rem;
                found = 1;
            }
        }
        out[best]++;
        given++;
    }
}
