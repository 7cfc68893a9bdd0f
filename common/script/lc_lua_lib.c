/* lc_lua_lib.c — the sandbox's libraries for tenant code beyond Lua's own: sha256, hmac_sha256
 * (hex digests, OpenSSL), base64.encode/decode, uuid() (v4) and time.now_ms(). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "lc_lua_internal.h"
#include "lc_tpl_stage.h"
#include "lc_value.h"

static const char hex_digits[] = "0123456789abcdef";

int lc_lua_errorf(lua_State *L, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    luaL_where(L, 1);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

/* Pushes n bytes as 2n lowercase hex digits. */
static void push_hex(lua_State *L, const unsigned char *b, size_t n)
{
    char out[2 * EVP_MAX_MD_SIZE];
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex_digits[b[i] >> 4];
        out[2 * i + 1] = hex_digits[b[i] & 15];
    }
    lua_pushlstring(L, out, 2 * n);
}

/* A digest over a whole string takes one C call the count hook cannot interrupt: the input
 * is bounded so that call stays well under a deadline's worth (~2 GB/s here). */
static const char *checked_bytes(lua_State *L, int arg, const char *fn, size_t *len)
{
    const char *s = luaL_checklstring(L, arg, len);
    if (*len > LC_LUA_LIB_BYTES_MAX)
        lc_lua_errorf(L, "%s: argument %d is %zu bytes, more than the %u allowed", fn, arg, *len,
                   LC_LUA_LIB_BYTES_MAX);
    return s;
}

/* sha256(s): the SHA-256 of s as 64 hex digits. */
static int l_sha256(lua_State *L)
{
    size_t len;
    const char *s = checked_bytes(L, 1, "sha256", &len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(s, len, md, &n, EVP_sha256(), NULL) != 1)
        return luaL_error(L, "sha256: OpenSSL failed");
    push_hex(L, md, n);
    lc_lua_limits_check(lc_lua_from(L), L);
    return 1;
}

/* hmac_sha256(key, msg): HMAC-SHA256 of msg under key as 64 hex digits; hmac_sha256(key,
 * msg, true): the 32 raw bytes (for chained keys, as AWS's signature v4 derives them). */
static int l_hmac_sha256(lua_State *L)
{
    size_t klen, mlen;
    const char *key = checked_bytes(L, 1, "hmac_sha256", &klen);
    const char *msg = checked_bytes(L, 2, "hmac_sha256", &mlen);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, mlen, md, &n) == NULL)
        return luaL_error(L, "hmac_sha256: OpenSSL failed");
    if (lua_toboolean(L, 3))
        lua_pushlstring(L, (const char *)md, n);
    else
        push_hex(L, md, n);
    lc_lua_limits_check(lc_lua_from(L), L);
    return 1;
}

/* ---- base64 --------------------------------------------------------------------------- */

static int l_b64_encode(lua_State *L)
{
    size_t len;
    const char *s = checked_bytes(L, 1, "base64.encode", &len);
    const lc_tpl_stage_t *b64 = lc_tpl_filter(LC_TPL_FILTER_BASE64);
    luaL_Buffer b;
    uint8_t type = LC_V_STRING;
    luaL_buffinit(L, &b);
    /* In pieces of 3 * 256 bytes, so each fits LUAL_BUFFERSIZE and stays padding-free. */
    for (size_t at = 0; at < len; at += 768) {
        size_t n = len - at < 768 ? len - at : 768;
        char out[1024];
        size_t w = b64->write(s + at, n, &type, out);
        luaL_addlstring(&b, out, w);
    }
    luaL_pushresult(&b);
    return 1;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict: the standard alphabet, padding optional, but when there
 * it makes the length a multiple of 4, no spaces; bits left
 * over past the last whole byte must be zero (so one text decodes one way only). */
static int l_b64_decode(lua_State *L)
{
    size_t len;
    const char *s = checked_bytes(L, 1, "base64.decode", &len);
    size_t pad = 0;
    while (pad < 2 && len > 0 && s[len - 1] == '=') {
        len--;
        pad++;
    }
    if ((pad > 0 && (len + pad) % 4 != 0) || len % 4 == 1)
        return luaL_error(L, "base64.decode: not base64 (its length)");
    luaL_Buffer b;
    uint32_t acc = 0;
    unsigned bits = 0;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < len; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0)
            return lc_lua_errorf(L, "base64.decode: not base64 (byte %zu)", i + 1);
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            luaL_addchar(&b, (char)(acc >> bits & 0xff));
        }
    }
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
        return luaL_error(L, "base64.decode: not base64 (its last character)");
    luaL_pushresult(&b);
    return 1;
}

/* ---- uuid, time ----------------------------------------------------------------------- */

/* uuid(): a random version 4 UUID (RFC 9562), from OpenSSL's generator rather than the
 * seeded math.random, so two runs with the same seed do not make the same ids. */
static int l_uuid(lua_State *L)
{
    unsigned char r[16];
    char out[36];
    if (RAND_bytes(r, sizeof r) != 1)
        return luaL_error(L, "uuid: no random bytes from OpenSSL");
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    size_t w = 0;
    for (size_t i = 0; i < sizeof r; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[w++] = '-';
        out[w++] = hex_digits[r[i] >> 4];
        out[w++] = hex_digits[r[i] & 15];
    }
    lua_pushlstring(L, out, w);
    return 1;
}

/* time.now_ms(): milliseconds since the Unix epoch (the wall clock, for timestamps). */
static int l_now_ms(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    lua_pushnumber(L, (double)ts.tv_sec * 1000.0 + (double)(ts.tv_nsec / 1000000));
    return 1;
}

static void set_fn(lua_State *L, int t, const char *name, lua_CFunction fn)
{
    lua_pushstring(L, name);
    lua_pushcfunction(L, fn);
    lua_rawset(L, t);
}

/* OpenSSL loads its providers and seeds its generator on first use, which takes longer
 * than a step's deadline: that happens here, when the state is made, not in a user's step. */
static void warm_up(void)
{
    unsigned char md[EVP_MAX_MD_SIZE], r[1];
    unsigned int n;
    EVP_Digest("", 0, md, &n, EVP_sha256(), NULL);
    HMAC(EVP_sha256(), "", 0, (const unsigned char *)"", 0, md, &n);
    RAND_bytes(r, sizeof r);
}

void lc_lua_lib_open(lua_State *L)
{
    warm_up();
    set_fn(L, LUA_GLOBALSINDEX, "sha256", l_sha256);
    set_fn(L, LUA_GLOBALSINDEX, "hmac_sha256", l_hmac_sha256);
    set_fn(L, LUA_GLOBALSINDEX, "uuid", l_uuid);
    lua_newtable(L);
    set_fn(L, lua_gettop(L), "encode", l_b64_encode);
    set_fn(L, lua_gettop(L), "decode", l_b64_decode);
    lua_setfield(L, LUA_GLOBALSINDEX, "base64");
    lua_newtable(L);
    set_fn(L, lua_gettop(L), "now_ms", l_now_ms);
    lua_setfield(L, LUA_GLOBALSINDEX, "time");
}
