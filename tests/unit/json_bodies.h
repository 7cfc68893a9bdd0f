/* json_bodies.h — for the extraction tests and their micro-benchmarks: a login
 * response of about 0.7 KB (the token in "data", after a user object) and an
 * item list of about 11 KB (50 items, then "next"), as an API would send them. */
#ifndef TEST_JSON_BODIES_H
#define TEST_JSON_BODIES_H

#include <stdio.h>
#include <string.h>

#define LOGIN_TOKEN                                                                        \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NSIsIm5hbWUiOiJBbGljZSBFeGFtcGxlIiwi" \
    "cm9sZXMiOlsiYnV5ZXIiLCJyZXZpZXdlciJdLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0.c2ln" \
    "bmF0dXJlLW9mLXRoZS10b2tlbi13aGljaC1pcy1sb25nLWVub3VnaC10by1sb29rLXJlYWw"

/* About 0.7 KB; the text of $.data.token is LOGIN_TOKEN. */
static const char login_body[] =
    "{\"status\":\"ok\",\"request_id\":\"6f1c2a9e-8d3b-4c55-9a1e-2f7b8c9d0e1f\","
    "\"user\":{\"id\":12345,\"name\":\"Alice Example\",\"email\":\"alice@example.com\","
    "\"roles\":[\"buyer\",\"reviewer\"],\"created_at\":\"2023-04-01T12:00:00Z\","
    "\"preferences\":{\"lang\":\"en\",\"currency\":\"EUR\",\"newsletter\":false,"
    "\"theme\":\"dark\"},\"addresses\":[{\"city\":\"Lyon\",\"zip\":\"69001\"},"
    "{\"city\":\"Paris\",\"zip\":\"75002\"}]},"
    "\"data\":{\"token\":\"" LOGIN_TOKEN "\",\"expires_in\":3600,"
    "\"refresh\":\"r-9f8e7d6c5b4a39281706f5e4d3c2b1a0\"},"
    "\"meta\":{\"server\":\"api-3\",\"took_ms\":12}}";

#define ITEMS_COUNT 50

/* About 11 KB into buf (cap at least 16 KB); returns its length. The items'
 * ids are "item-0000" to "item-0049", the last member "next" is "/page/2". */
static size_t items_body(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "{\"page\":1,\"total\":%d,\"items\":[", ITEMS_COUNT);
    for (int i = 0; i < ITEMS_COUNT && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n,
                              "%s{\"id\":\"item-%04d\",\"name\":\"Item number %d\",\"price\":%d.%02d,"
                              "\"tags\":[\"new\",\"sale\",\"t%d\"],\"stock\":%s,\"rating\":4.%d,"
                              "\"description\":\"A fine \\\"thing\\\" for everyday use, with an "
                              "escaped quote and some words to make it long enough.\"}",
                              i ? "," : "", i, i, 10 + i, i % 100, i % 7, i % 3 ? "true" : "false",
                              i % 10);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "],\"next\":\"/page/2\"}");
    return n < cap ? n : cap - 1;
}

#endif
