/* lc_json_scan.c — the scan: follows a compiled path through a body with a
 * stack of the containers it entered; what it does not enter it skips. */
#include "lc_json_scan.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "lc_err.h"
#include "lc_json_scan_internal.h"

/* Following the path ------------------------------------------------------ */

enum frame_state {
    AT_OPEN,   /* just after '[' or '{' */
    AT_CHILD,  /* at an element (jumped to by a negative index) */
    AFTER_CHILD, /* just after an element or a member's value */
};

/* A container the path entered. */
typedef struct frame_s {
    const jpath_seg_t *seg; /* what selects among its children */
    size_t seg_i;
    bool is_object;
    uint8_t state;        /* enum frame_state */
    bool selected_done;   /* a name or index segment's child was visited */
    int64_t next_index;   /* arrays: the index of the next element */
    int64_t target;       /* index segments: the element wanted; -1: none */
    size_t end;           /* when known (negative index), the offset after ']' */
} frame_t;

typedef struct scan_s {
    jcursor_t c;
    const lc_jpath_t *p;
    lc_jpath_match_cb fn;
    void *ctx;
    bool stop;
    int top; /* frames in use */
    frame_t frames[LC_JPATH_MAX_SEGMENTS];
} scan_t;

/* Skips the value at the cursor: a scalar is read (and checked, it is short),
 * a container only to its end. */
static int skip_value(scan_t *s)
{
    int ch = jcursor_peek(&s->c);
    if (ch == '{' || ch == '[')
        return jskip_containers(&s->c, s->top, 0);
    uint8_t type;
    bool escaped;
    return jscan_scalar(&s->c, s->top == 0, &type, &escaped);
}

/* The value at the cursor is selected whole: hands it to the callback. */
static int emit(scan_t *s)
{
    lc_jmatch_t m = {.escaped = false};
    size_t start = s->c.pos;
    int ch = jcursor_peek(&s->c), rv;
    if (ch == '{' || ch == '[') {
        m.v.type = LC_V_JSON;
        rv = jscan_check_value(&s->c, s->top);
    } else {
        rv = jscan_scalar(&s->c, s->top == 0, &m.v.type, &m.escaped);
    }
    if (rv != 0)
        return rv;
    bool quoted = m.v.type == LC_V_STRING;
    m.v.data = s->c.s + start + quoted;
    m.v.len = s->c.pos - start - 2 * quoted;
    /* Without a wildcard nothing else can match; but a selected root is
     * still followed by the check that nothing comes after it. */
    if (!s->fn(s->ctx, &m) || (!s->p->has_wildcard && s->top > 0))
        s->stop = true;
    return 0;
}

/* A negative index: counts the elements (keeping where the last few start)
 * to know which one it is, then goes to it or, when too far back, rescans. */
#define RECENT 8
static int resolve_negative(scan_t *s, frame_t *f)
{
    jcursor_t *c = &s->c;
    size_t open = c->pos, recent[RECENT];
    int64_t count = 0;
    jcursor_skip_ws(c);
    if (jcursor_peek(c) != ']') {
        for (;;) {
            recent[count++ % RECENT] = c->pos;
            int rv = skip_value(s);
            if (rv != 0)
                return rv;
            jcursor_skip_ws(c);
            if (jcursor_peek(c) != ',')
                break;
            c->pos++;
            jcursor_skip_ws(c);
        }
        if (jcursor_peek(c) != ']')
            return LC_EINVAL;
    }
    f->end = c->pos + 1;
    int64_t back = -f->seg->index;
    if (count < back) {
        f->selected_done = true; /* nothing to select: leave at once */
        return 0;
    }
    f->target = count - back;
    if (back <= RECENT) {
        c->pos = recent[f->target % RECENT];
        f->next_index = f->target;
        f->state = AT_CHILD;
    } else {
        c->pos = open;
    }
    return 0;
}

/* The value at the cursor is selected by the first seg_i segments. */
static int visit(scan_t *s, size_t seg_i)
{
    if (seg_i == s->p->nseg)
        return emit(s);
    const jpath_seg_t *seg = &s->p->seg[seg_i];
    int ch = jcursor_peek(&s->c);
    bool enters = seg->kind == SEG_NAME ? ch == '{' : seg->kind == SEG_INDEX ? ch == '[' :
                                                      ch == '{' || ch == '[';
    if (!enters) {
        /* Nothing below can match, and only a wildcard above could select
         * more: a container need not be read then. Scalars (short) and the
         * root are read, so that a body that is no JSON at all says so. */
        if (!seg->wildcard_above && s->top > 0 && (ch == '{' || ch == '[')) {
            s->stop = true;
            return 0;
        }
        return skip_value(s);
    }
    assert(s->top < LC_JPATH_MAX_SEGMENTS);
    frame_t *f = &s->frames[s->top++];
    *f = (frame_t){.seg = seg, .seg_i = seg_i, .is_object = ch == '{', .state = AT_OPEN,
                   .target = seg->kind == SEG_INDEX ? seg->index : -1};
    s->c.pos++;
    return seg->kind == SEG_INDEX && seg->index < 0 ? resolve_negative(s, f) : 0;
}

/* Object keys compare decoded: "\u0061" is the name "a". */
static bool key_equals(const char *raw, size_t raw_len, bool escaped, const jpath_seg_t *seg)
{
    if (!escaped)
        return raw_len == seg->name_len && memcmp(raw, seg->name, raw_len) == 0;
    size_t i = 0, matched = 0;
    while (i < raw_len) {
        char ch[4];
        size_t n = jstring_decode_one(raw, raw_len, &i, ch);
        if (n == 0 || seg->name_len - matched < n || memcmp(seg->name + matched, ch, n) != 0)
            return false;
        matched += n;
    }
    return matched == seg->name_len;
}

static int visit_member(scan_t *s, frame_t *f)
{
    const char *key;
    size_t key_len;
    bool escaped;
    if (jscan_member_name(&s->c, &key, &key_len, &escaped) != 0)
        return LC_EINVAL;
    if (f->seg->kind == SEG_WILDCARD)
        return visit(s, f->seg_i + 1);
    if (!key_equals(key, key_len, escaped, f->seg))
        return skip_value(s);
    f->selected_done = true;
    return visit(s, f->seg_i + 1);
}

static int visit_element(scan_t *s, frame_t *f)
{
    int64_t index = f->next_index++;
    if (f->seg->kind == SEG_WILDCARD)
        return visit(s, f->seg_i + 1);
    if (index != f->target)
        return skip_value(s);
    f->selected_done = true;
    return visit(s, f->seg_i + 1);
}

/* The selected child of a name or index segment is done: nothing else in
 * this container can be selected, and nothing at all unless a wildcard
 * above may select more. */
static int leave_selected(scan_t *s, frame_t *f)
{
    if (!f->seg->wildcard_above) {
        s->stop = true;
        return 0;
    }
    int rv = 0;
    if (f->end != 0)
        s->c.pos = f->end;
    else
        rv = jskip_containers(&s->c, s->top - 1, 1);
    s->top--;
    return rv;
}

/* Moves the innermost frame on by one child (which may push a frame). */
static int step(scan_t *s)
{
    frame_t *f = &s->frames[s->top - 1];
    if (f->selected_done)
        return leave_selected(s, f);
    jcursor_t *c = &s->c;
    jcursor_skip_ws(c);
    if (f->state != AT_CHILD) {
        int ch = jcursor_peek(c), close = f->is_object ? '}' : ']';
        if (ch == close) {
            c->pos++;
            s->top--;
            return 0;
        }
        if (f->state == AFTER_CHILD) {
            if (ch != ',')
                return LC_EINVAL;
            c->pos++;
            jcursor_skip_ws(c);
        }
    }
    f->state = AFTER_CHILD;
    return f->is_object ? visit_member(s, f) : visit_element(s, f);
}

int lc_jpath_scan(const lc_jpath_t *p, const char *body, size_t len, lc_jpath_match_cb fn,
                  void *ctx)
{
    assert(p != NULL && fn != NULL && (body != NULL || len == 0));
    scan_t s; /* frames are set as they are pushed: zeroing them all costs more than a short scan */
    s.c = (jcursor_t){.s = body, .len = len, .pos = 0};
    s.p = p;
    s.fn = fn;
    s.ctx = ctx;
    s.stop = false;
    s.top = 0;
    jcursor_skip_ws(&s.c);
    if (jcursor_peek(&s.c) < 0)
        return LC_EINVAL;
    int rv = visit(&s, 0);
    while (rv == 0 && !s.stop && s.top > 0)
        rv = step(&s);
    if (rv == 0 && !s.stop) {
        jcursor_skip_ws(&s.c);
        if (s.c.pos != len)
            return LC_EINVAL; /* something after the root value */
    }
    return rv;
}
