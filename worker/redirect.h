/* redirect.h — the rules of following a redirect that steps and scripts share (pure). */
#ifndef WORKER_REDIRECT_H
#define WORKER_REDIRECT_H

#include <stdbool.h>

/* Whether status is a redirect the engine follows (301, 302, 303, 307, 308). */
bool worker_redirect_status(int status);
/* Whether the hop after a status redirect that answered a request made with method is a GET
 * without the body: after 301, 302 and 303 (HEAD stays HEAD); 307 and 308 keep the method
 * and body of the request they answer (RFC 9110 15.4, as browsers do). A request that became
 * a GET stays one on the hops after. */
bool worker_redirect_to_get(int status, const char *method);
/* Whether a redirect may be followed after hops were (limit: follow_redirects): with the
 * default 10, the 11th redirect is an error of kind redirect. */
bool worker_redirect_may_follow(unsigned hops, unsigned limit);

#endif
