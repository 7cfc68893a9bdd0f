/* auth.c — API tokens: random secrets, SHA-256 hashes compared in constant
 * time, bearer parsing, the caller's identity, and the first admin token. */
#include "auth.h"
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "quorum.h"

static int random_bytes(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return LC_EIO;
        got += (size_t)n;
    }
    return 0;
}

int auth_token_new(char token[AUTH_TOKEN_LEN])
{
    static const char b64url[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t raw[(AUTH_TOKEN_BYTES + 2) / 3 * 3] = {0}; /* zero-padded to whole groups of 3 */
    if (random_bytes(raw, AUTH_TOKEN_BYTES) != 0)
        return LC_EIO;
    size_t out = strlen(AUTH_TOKEN_PREFIX);
    memcpy(token, AUTH_TOKEN_PREFIX, out);
    for (size_t i = 0; i < sizeof raw; i += 3) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
        for (int k = 3; k >= 0; k--)
            token[out++] = b64url[(v >> (6 * k)) & 63];
    }
    /* 32 bytes are 43 characters unpadded: drop what the zero padding added. */
    out = strlen(AUTH_TOKEN_PREFIX) + (AUTH_TOKEN_BYTES * 8 + 5) / 6;
    token[out] = '\0';
    OPENSSL_cleanse(raw, sizeof raw);
    return 0;
}

int auth_token_id_new(char id[AUTH_ID_LEN])
{
    uint8_t raw[8];
    if (random_bytes(raw, sizeof raw) != 0)
        return LC_EIO;
    int n = snprintf(id, AUTH_ID_LEN, "tok_");
    for (size_t i = 0; i < sizeof raw; i++)
        n += snprintf(id + n, AUTH_ID_LEN - (size_t)n, "%02x", raw[i]);
    return 0;
}

int auth_hash(const char *token, size_t len, uint8_t out[STORE_TOKEN_HASH_LEN])
{
    unsigned int n = 0;
    if (EVP_Digest(token, len, out, &n, EVP_sha256(), NULL) != 1 || n != STORE_TOKEN_HASH_LEN)
        return LC_EIO;
    return 0;
}

bool auth_token_format_ok(const char *text, size_t len)
{
    static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
    if (len < AUTH_TOKEN_MIN || len > AUTH_TOKEN_MAX)
        return false;
    size_t i = 0;
    while (i < len && text[i] != '\0' && strchr(set, text[i]) != NULL)
        i++;
    if (i == 0)
        return false;
    while (i < len && text[i] == '=')
        i++;
    return i == len;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

int auth_bearer_parse(const char *header, const char **token, size_t *len)
{
    if (header == NULL)
        return LC_EINVAL;
    const char *p = header;
    while (is_space(*p))
        p++;
    if (strncasecmp(p, "Bearer", 6) != 0 || !is_space(p[6]))
        return LC_EINVAL;
    p += 6;
    while (is_space(*p))
        p++;
    const char *start = p;
    while (*p != '\0' && !is_space(*p)) {
        if ((unsigned char)*p < 0x21 || (unsigned char)*p == 0x7f)
            return LC_EINVAL;
        p++;
    }
    size_t n = (size_t)(p - start);
    while (is_space(*p))
        p++;
    if (*p != '\0' || n == 0 || n > AUTH_TOKEN_MAX)
        return LC_EINVAL;
    *token = start;
    *len = n;
    return 0;
}

int auth_identify(store_t *s, const char *header, auth_identity_t *out)
{
    const char *token;
    size_t len;
    if (auth_bearer_parse(header, &token, &len) != 0 || !auth_token_format_ok(token, len))
        return LC_ENOTFOUND;
    uint8_t hash[STORE_TOKEN_HASH_LEN], stored[STORE_TOKEN_HASH_LEN];
    if (auth_hash(token, len, hash) != 0)
        return LC_EIO;
    store_token_t t;
    int rv = store_token_by_hash(s, hash, &t, stored);
    if (rv != 0)
        return rv == LC_ENOTFOUND ? LC_ENOTFOUND : LC_EIO;
    /* The index found it; this compare is the one that decides, in constant time. */
    if (CRYPTO_memcmp(hash, stored, STORE_TOKEN_HASH_LEN) != 0)
        return LC_ENOTFOUND;
    memset(out, 0, sizeof *out);
    if (strcmp(t.role, "admin") == 0)
        out->role = AUTH_ROLE_ADMIN;
    else if (strcmp(t.role, "tenant") == 0 && t.tenant[0] != '\0')
        out->role = AUTH_ROLE_TENANT;
    else
        return LC_ENOTFOUND;
    snprintf(out->tenant, sizeof out->tenant, "%s", out->role == AUTH_ROLE_TENANT ? t.tenant : "");
    snprintf(out->token_id, sizeof out->token_id, "%s", t.id);
    return 0;
}

/* ---- --admin-token-file ---- */

bool auth_header_matches(const char *header, const uint8_t hash[STORE_TOKEN_HASH_LEN])
{
    const char *token;
    size_t len;
    uint8_t got[STORE_TOKEN_HASH_LEN];
    return auth_bearer_parse(header, &token, &len) == 0 && auth_token_format_ok(token, len) &&
           auth_hash(token, len, got) == 0 && CRYPTO_memcmp(got, hash, sizeof got) == 0;
}

/* ---- token files ---- */

int auth_token_file_read(const char *flag, const char *path, uint8_t hash[STORE_TOKEN_HASH_LEN],
                         char *errmsg, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return LC_ENOTFOUND;
    if (fd < 0) {
        snprintf(errmsg, errlen, "%s %s: %s", flag, path, strerror(errno));
        return LC_EIO;
    }
    char buf[AUTH_TOKEN_MAX + 64];
    struct stat st;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
        lc_warn("auth", "msg=\"a token file is readable by others; chmod 600 it\" flag=%s path=%s",
                flag, path);
    close(fd);
    if (n < 0) {
        snprintf(errmsg, errlen, "%s %s: %s", flag, path, strerror(errno));
        return LC_EIO;
    }
    size_t len = (size_t)n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || is_space(buf[len - 1])))
        len--;
    int rv = 0;
    if (!auth_token_format_ok(buf, len)) {
        snprintf(errmsg, errlen, "%s %s: expected one token of %d to %d characters (letters, "
                 "digits, -._~+/), nothing else", flag, path, AUTH_TOKEN_MIN, AUTH_TOKEN_MAX);
        rv = LC_EINVAL;
    } else if (auth_hash(buf, len, hash) != 0) {
        snprintf(errmsg, errlen, "%s: SHA-256 failed", flag);
        rv = LC_EIO;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    return rv;
}

/* Writes a new token to a private temporary file and links it into place:
 * link() fails with EEXIST when another master won, and never exposes a
 * half-written file. Returns 0, LC_ESTATE when path exists, or LC_EIO. */
static int create_token_file(const char *path, char *errmsg, size_t errlen)
{
    char tmp[PATH_MAX + 32], token[AUTH_TOKEN_LEN];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (auth_token_new(token) != 0) {
        snprintf(errmsg, errlen, "--admin-token-file: getrandom failed");
        return LC_EIO;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    size_t len = strlen(token);
    token[len] = '\n';
    bool ok = fd >= 0 && write(fd, token, len + 1) == (ssize_t)(len + 1) && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0)
        close(fd);
    int linked = ok ? link(tmp, path) : -1;
    if (ok && linked != 0)
        err = errno;
    if (fd >= 0)
        unlink(tmp);
    token[len] = '\0';
    int rv = 0;
    if (linked == 0) {
        lc_warn("auth", "msg=\"generated the first admin token and wrote it to the admin token "
                "file; it is shown only here\" path=%s token=%s", path, token);
    } else if (ok && err == EEXIST) {
        rv = LC_ESTATE;
    } else {
        snprintf(errmsg, errlen, "--admin-token-file %s: cannot create: %s", path, strerror(err));
        rv = LC_EIO;
    }
    OPENSSL_cleanse(token, sizeof token);
    return rv;
}

int auth_token_file_load(const char *path, uint8_t hash[STORE_TOKEN_HASH_LEN], bool *created,
                         char *errmsg, size_t errlen)
{
    *created = false;
    int rv = auth_token_file_read("--admin-token-file", path, hash, errmsg, errlen);
    if (rv != LC_ENOTFOUND)
        return rv;
    rv = create_token_file(path, errmsg, errlen);
    if (rv == LC_EIO)
        return rv;
    *created = rv == 0;
    rv = auth_token_file_read("--admin-token-file", path, hash, errmsg, errlen);
    if (rv == LC_ENOTFOUND)
        snprintf(errmsg, errlen, "--admin-token-file %s: vanished while being created", path);
    return rv;
}

/* ---- bootstrap on the leader ---- */

typedef struct first_admin_s {
    bool generated;
    char token[AUTH_TOKEN_LEN]; /* the secret when generated, to show it once */
} first_admin_t;

static void first_admin_cb(void *arg, int status, int result)
{
    first_admin_t *fa = arg;
    if (status != 0 || result != 0)
        lc_warn("auth", "msg=\"could not store the first admin token; the next leader will "
                "try again\" error=\"%s\"", lc_strerror(status != 0 ? status : result));
    else if (fa->generated)
        lc_warn("auth", "msg=\"generated the first admin token; it is shown only once, keep "
                "it (or start the masters with --admin-token-file)\" token=%s", fa->token);
    else
        lc_info("auth", "msg=\"the admin token of --admin-token-file is now the first admin token\"");
    OPENSSL_cleanse(fa, sizeof *fa);
    free(fa);
}

static void propose_first_admin(master_t *m)
{
    first_admin_t *fa = calloc(1, sizeof *fa);
    uint8_t hash[STORE_TOKEN_HASH_LEN];
    char id[AUTH_ID_LEN];
    int rv = fa == NULL ? LC_ENOMEM : auth_token_id_new(id);
    if (rv == 0 && m->admin_hash_set) {
        memcpy(hash, m->admin_hash, sizeof hash);
    } else if (rv == 0) {
        fa->generated = true;
        rv = auth_token_new(fa->token);
        if (rv == 0)
            rv = auth_hash(fa->token, strlen(fa->token), hash);
    }
    command_sink_t sink = command_sink_quorum(m->quorum);
    if (rv == 0)
        rv = command_put_token(&sink, id, hash, sizeof hash, "admin", "",
                               fa->generated ? "bootstrap" : "admin-token-file", lc_wall_ms(),
                               first_admin_cb, fa);
    if (rv != 0) {
        lc_warn("auth", "msg=\"cannot propose the first admin token\" error=\"%s\"", lc_strerror(rv));
        if (fa != NULL)
            OPENSSL_cleanse(fa, sizeof *fa);
        free(fa);
    }
}

/* The default tenant's proposal doubles as a barrier: once it is applied,
 * so is everything earlier leaders committed, and the admin token count is
 * current. */
static void default_tenant_cb(void *arg, int status, int result)
{
    master_t *m = arg;
    if (status != 0 || m->stopping || !quorum_is_leader(m->quorum))
        return;
    if (result != 0 && result != LC_ESTATE)
        lc_warn("auth", "msg=\"cannot create tenant default\" error=\"%s\"", lc_strerror(result));
    if (store_admin_tokens(m->store) == 0)
        propose_first_admin(m);
}

void auth_on_leader(master_t *m)
{
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = command_create_tenant(&sink, "default", 1, lc_wall_ms(), default_tenant_cb, m);
    if (rv != 0)
        lc_warn("auth", "msg=\"cannot propose tenant default\" error=\"%s\"", lc_strerror(rv));
}
