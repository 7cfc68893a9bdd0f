/* redirect.c — the rules of following a redirect (pure). */
#include "redirect.h"

#include <assert.h>
#include <string.h>

bool worker_redirect_status(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool worker_redirect_to_get(int status, const char *method)
{
    assert(method != NULL && worker_redirect_status(status));
    return (status == 301 || status == 302 || status == 303) && strcmp(method, "HEAD") != 0;
}

bool worker_redirect_may_follow(unsigned hops, unsigned limit)
{
    return hops < limit;
}
