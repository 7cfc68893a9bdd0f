/* lc_cookie_date.c — RFC 6265 5.1.1 cookie-dates, parsed without strptime (no locale). */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lc_cookie.h"

/* The parts a cookie-date names; -1 until a token supplied it. */
typedef struct date_parts_s {
    int hour, minute, second, day, month, year;
} date_parts_t;

/* RFC 6265's delimiter: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E. */
static bool is_delimiter(unsigned char c)
{
    return c == 0x09 || (c >= 0x20 && c <= 0x2f) || (c >= 0x3b && c <= 0x40) ||
           (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Reads min..max digits at tok[*i], then requires the token's end or a non-digit.
 * Returns the number, or -1 when the digits are not there. */
static int read_digits(const char *tok, size_t len, size_t *i, size_t min, size_t max)
{
    size_t start = *i;
    int v = 0;
    while (*i < len && *i - start < max && is_digit((unsigned char)tok[*i]))
        v = v * 10 + (tok[(*i)++] - '0');
    if (*i - start < min || (*i < len && is_digit((unsigned char)tok[*i])))
        return -1;
    return v;
}

/* time = hms-time ( non-digit *OCTET ); hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT */
static bool match_time(const char *tok, size_t len, date_parts_t *d)
{
    size_t i = 0;
    int h = read_digits(tok, len, &i, 1, 2);
    if (h < 0 || i >= len || tok[i++] != ':')
        return false;
    int m = read_digits(tok, len, &i, 1, 2);
    if (m < 0 || i >= len || tok[i++] != ':')
        return false;
    int s = read_digits(tok, len, &i, 1, 2);
    if (s < 0)
        return false;
    d->hour = h;
    d->minute = m;
    d->second = s;
    return true;
}

/* month = ( "jan" / "feb" / ... / "dec" ) *OCTET, case-insensitive. */
static int match_month(const char *tok, size_t len)
{
    static const char names[] = "janfebmaraprmayjunjulaugsepoctnovdec";
    if (len < 3)
        return -1;
    char lower[3];
    for (int k = 0; k < 3; k++)
        lower[k] = (char)(tok[k] >= 'A' && tok[k] <= 'Z' ? tok[k] + 32 : tok[k]);
    for (int m = 0; m < 12; m++)
        if (memcmp(lower, names + 3 * m, 3) == 0)
            return m + 1;
    return -1;
}

/* Gives one date-token to the first production, in RFC 6265's order, not yet found. */
static void take_token(const char *tok, size_t len, date_parts_t *d)
{
    size_t i = 0;
    int v;
    if (d->hour < 0 && match_time(tok, len, d))
        return;
    if (d->day < 0 && (v = read_digits(tok, len, &i, 1, 2)) >= 0) {
        d->day = v;
        return;
    }
    if (d->month < 0 && (v = match_month(tok, len)) > 0) {
        d->month = v;
        return;
    }
    i = 0;
    if (d->year < 0 && (v = read_digits(tok, len, &i, 2, 4)) >= 0)
        d->year = v;
}

static bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int month, int year)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

/* Days from 1970-01-01 to year-month-day (proleptic Gregorian, year >= 1601), negative before. */
static int64_t days_since_epoch(int year, int month, int day)
{
    int64_t y = year - 1; /* whole years before this one, counted from year 1 */
    int64_t days = 365 * y + y / 4 - y / 100 + y / 400 - 719162; /* 719162: those of 1..1969 */
    for (int m = 1; m < month; m++)
        days += days_in_month(m, year);
    return days + day - 1;
}

static bool parts_valid(date_parts_t *d)
{
    if (d->hour < 0 || d->day < 0 || d->month < 0 || d->year < 0)
        return false;
    if (d->year >= 70 && d->year <= 99)
        d->year += 1900;
    else if (d->year <= 69)
        d->year += 2000;
    return d->day >= 1 && d->day <= days_in_month(d->month, d->year) && d->year >= 1601 &&
           d->hour <= 23 && d->minute <= 59 && d->second <= 59;
}

bool lc_cookie_date_parse(const char *text, size_t len, uint64_t *ms)
{
    assert(text != NULL || len == 0);
    assert(ms != NULL);
    date_parts_t d = {-1, -1, -1, -1, -1, -1};
    size_t i = 0;
    while (i < len) {
        while (i < len && is_delimiter((unsigned char)text[i]))
            i++;
        size_t start = i;
        while (i < len && !is_delimiter((unsigned char)text[i]))
            i++;
        if (i > start)
            take_token(text + start, i - start, &d);
    }
    if (!parts_valid(&d))
        return false;
    int64_t days = days_since_epoch(d.year, d.month, d.day);
    int64_t secs = days * 86400 + d.hour * 3600 + d.minute * 60 + d.second;
    *ms = secs < 0 ? 0 : (uint64_t)secs * 1000;
    return true;
}
