/* make_seeds.c — writes the hand-made seed inputs of every fuzz target into
 * <dir>/<target>/seed-*: a few valid examples each (protobuf messages are
 * built with the generated code, so they match proto/ as it is). Run by hand
 * when a format changes: build/fuzz_make_seeds tests/fuzz/corpus */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster.pb-c.h"
#include "fuzz_tls_cert.h"
#include "lc_frame.h"
#include "lc_hist.h"
#include "lc_tls_channel.h"
#include "state.pb-c.h"
#include "store.h"

static const char *root;

/* A growable byte string. */
typedef struct bytes_s {
    uint8_t *p;
    size_t n;
} bytes_t;

static void add(bytes_t *b, const void *data, size_t len)
{
    b->p = realloc(b->p, b->n + len + 1);
    if (b->p == NULL)
        abort();
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void add_u8(bytes_t *b, uint8_t v) { add(b, &v, 1); }

static void add_varint(bytes_t *b, size_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        add_u8(b, c | (v ? 0x80 : 0));
    } while (v);
}

static void put(const char *target, const char *name, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/seed-%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void put_text(const char *target, const char *name, const char *text)
{
    put(target, name, text, strlen(text));
}

static void put_bytes(const char *target, const char *name, bytes_t *b)
{
    put(target, name, b->p, b->n);
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

/* Envelopes ------------------------------------------------------------- */

static const char scenario[] =
    "{\"name\":\"demo\",\"target\":\"http://127.0.0.1:8080\",\"duration\":\"8s\",\"users\":4,"
    "\"tasks\":[{\"name\":\"list\",\"weight\":3,\"path\":\"/api/items?page=${rand(1,50)}\"},"
    "{\"name\":\"create\",\"method\":\"POST\",\"path\":\"/api/items\",\"headers\":"
    "{\"Content-Type\":\"application/json\"},\"body\":\"{\\\"owner\\\":\\\"u${user_id}\\\"}\","
    "\"expect\":{\"status\":[200]}}],\"thresholds\":{\"http_req_duration\":[\"p(95)<500\"]}}";

static uint8_t hist_bytes[256];
static size_t hist_len;

static void make_hist(void)
{
    lc_hist_t *h = malloc(sizeof *h);
    lc_hist_init(h);
    for (uint64_t v = 1; v < 2000000; v = v * 3 + 7)
        lc_hist_record(h, v);
    uint8_t *enc;
    size_t len;
    if (lc_hist_encode(h, &enc, &len) != 0 || len > sizeof hist_bytes)
        abort();
    memcpy(hist_bytes, enc, len);
    hist_len = len;
    free(enc);
    free(h);
}

/* Appends env as a frame (varint length + body). */
static void add_frame(bytes_t *b, const Lc__Envelope *env)
{
    uint8_t *frame;
    size_t len;
    if (lc_frame_encode(env, &frame, &len) != 0)
        abort();
    add(b, frame, len);
    free(frame);
}

static Lc__RunLoad load = LC__RUN_LOAD__INIT;
static Lc__RunLoad *loads[1] = {&load};

static void env_hello(Lc__Envelope *env, Lc__Hello *h, const char *id)
{
    lc__hello__init(h);
    h->protocol_version = 1;
    h->worker_id = (char *)id;
    h->name = "host-1";
    h->threads = 2;
    h->capacity = 1000;
    load.run = 1;
    load.generation = 1;
    load.users = 4;
    load.connections = 4;
    h->n_running = 1;
    h->running = loads;
    lc__envelope__init(env);
    env->msg_case = LC__ENVELOPE__MSG_HELLO;
    env->hello = h;
}

static Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT;
static Lc__EndpointStats *eps[1] = {&ep};
static Lc__ErrorCount ec = LC__ERROR_COUNT__INIT;
static Lc__ErrorCount *ecs[1] = {&ec};

static void stats_batch(Lc__StatsBatch *s, uint64_t run, uint64_t seq, bool final)
{
    lc__stats_batch__init(s);
    s->run = run;
    s->worker_id = "w1";
    s->seq = seq;
    s->interval = (uint32_t)seq;
    ep.name = "list";
    ep.method = "GET";
    ep.count = 100;
    ep.failures = 2;
    ep.bytes = 12345;
    ep.hist.data = hist_bytes;
    ep.hist.len = hist_len;
    s->n_endpoints = 1;
    s->endpoints = eps;
    ec.endpoint = "list";
    ec.kind = "status_500";
    ec.count = 2;
    s->n_errors = 1;
    s->errors = ecs;
    s->final = final;
    s->users = 4;
}

static void seeds_frames(void)
{
    bytes_t b = {0};
    Lc__Envelope env;
    Lc__Hello hello;
    Lc__Heartbeat hb = LC__HEARTBEAT__INIT;
    Lc__StatsBatch sb;
    Lc__AssignRefused ar = LC__ASSIGN_REFUSED__INIT;

    /* frame: mode, 2 bytes of chunk-size seed, then frames. */
    static const uint8_t modes[][3] = {{1, 0, 1}, {0x81, 3, 7}, {0, 9, 9}};
    for (size_t m = 0; m < 3; m++) {
        add(&b, modes[m], 3);
        env_hello(&env, &hello, "w1");
        add_frame(&b, &env);
        hb.time_ms = 1234;
        hb.cpu_percent = 12.5;
        hb.n_runs = 1;
        hb.runs = loads;
        env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        add_frame(&b, &env);
        stats_batch(&sb, 1, 1, m == 2);
        env.msg_case = LC__ENVELOPE__MSG_STATS;
        env.stats = &sb;
        add_frame(&b, &env);
        char name[16];
        snprintf(name, sizeof name, "mode%zu", m);
        put_bytes("frame", name, &b);
    }

    /* master_dispatch: flags, then (ctl, frame) records. */
    static const uint8_t flags[] = {0, 1 | 4, 8, 2, 1};
    for (size_t f = 0; f < sizeof flags; f++) {
        add_u8(&b, flags[f]);
        for (int conn = 0; conn < 2; conn++) {
            env_hello(&env, &hello, conn ? "w2" : "w1");
            add_u8(&b, (uint8_t)(conn | 8));
            add_frame(&b, &env);
        }
        env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        add_u8(&b, 0x10);
        add_frame(&b, &env);
        stats_batch(&sb, 1, 1, false);
        env.msg_case = LC__ENVELOPE__MSG_STATS;
        env.stats = &sb;
        add_u8(&b, 0x20);
        add_frame(&b, &env);
        ar.run = 1;
        ar.generation = 1;
        ar.reason = "cannot resolve";
        env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
        env.assign_refused = &ar;
        add_u8(&b, 1);
        add_frame(&b, &env);
        Lc__FeedRequest fr = LC__FEED_REQUEST__INIT;
        fr.run = 1;
        fr.seq = 1ull << 32 | 1;
        fr.count = 8;
        env.msg_case = LC__ENVELOPE__MSG_FEED_REQUEST;
        env.feed_request = &fr;
        add_u8(&b, 1);
        add_frame(&b, &env);
        add_u8(&b, 0xf8 | 4); /* a tick, and a close */
        add_frame(&b, &env);
        char name[16];
        snprintf(name, sizeof name, "flags%u", flags[f]);
        put_bytes("master_dispatch", name, &b);
    }
}

static void seeds_worker_dispatch(void)
{
    bytes_t b = {0};
    Lc__Envelope env = LC__ENVELOPE__INIT;
    uint8_t nonce[32] = {1, 2, 3};
    Lc__Challenge ch = LC__CHALLENGE__INIT;
    ch.nonce.data = nonce;
    ch.nonce.len = sizeof nonce;
    env.msg_case = LC__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    add_frame(&b, &env);
    Lc__Welcome w = LC__WELCOME__INIT;
    char *masters[] = {"127.0.0.1:5557", "[::1]:5557"};
    w.leader_id = 1;
    w.term = 2;
    w.n_masters = 2;
    w.masters = masters;
    env.msg_case = LC__ENVELOPE__MSG_WELCOME;
    env.welcome = &w;
    add_frame(&b, &env);
    Lc__Assign a = LC__ASSIGN__INIT;
    a.run = 1;
    a.generation = 1;
    a.users = 4;
    a.spawn_rate = 4;
    a.scenario_json = (char *)scenario;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN;
    env.assign = &a;
    add_frame(&b, &env);
    Lc__StatsAck ack = LC__STATS_ACK__INIT;
    ack.run = 1;
    ack.seq = 3;
    env.msg_case = LC__ENVELOPE__MSG_STATS_ACK;
    env.stats_ack = &ack;
    add_frame(&b, &env);
    Lc__FeedLease fl = LC__FEED_LEASE__INIT; /* an answer to no request: ignored */
    fl.run = 1;
    fl.seq = 1;
    fl.start = 10;
    fl.count = 4;
    env.msg_case = LC__ENVELOPE__MSG_FEED_LEASE;
    env.feed_lease = &fl;
    add_frame(&b, &env);
    Lc__Stop st = LC__STOP__INIT;
    st.run = 1;
    st.reason = "stopped by user";
    env.msg_case = LC__ENVELOPE__MSG_STOP;
    env.stop = &st;
    add_frame(&b, &env);
    put_bytes("worker_dispatch", "session", &b);
    Lc__Redirect r = LC__REDIRECT__INIT;
    r.leader = "10.0.0.2:5557";
    env.msg_case = LC__ENVELOPE__MSG_REDIRECT;
    env.redirect = &r;
    add_frame(&b, &env);
    put_bytes("worker_dispatch", "redirect", &b);
}

/* Commands -------------------------------------------------------------- */

static void add_command(bytes_t *b, store_t *s, const Lc__Command *cmd)
{
    size_t len = lc__command__get_packed_size(cmd);
    uint8_t *buf = malloc(len + 1);
    lc__command__pack(cmd, buf);
    add_varint(b, len);
    add(b, buf, len);
    free(buf);
    if (s != NULL)
        store_apply(s, cmd);
}

/* A tenant, a token, two runs (one finished with a verdict), their stats. */
static void run_commands(bytes_t *b, store_t *s, int finish)
{
    Lc__Command cmd = LC__COMMAND__INIT;
    Lc__CreateTenant ct = LC__CREATE_TENANT__INIT;
    ct.name = "default";
    ct.weight = 1;
    ct.created_ms = 1700000000000ull;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_TENANT;
    cmd.create_tenant = &ct;
    add_command(b, s, &cmd);
    Lc__PutToken pt = LC__PUT_TOKEN__INIT;
    uint8_t hash[32] = {7};
    pt.id = "tok_0000000000000001";
    pt.hash.data = hash;
    pt.hash.len = sizeof hash;
    pt.role = "tenant";
    pt.tenant = "default";
    pt.name = "ci";
    cmd.cmd_case = LC__COMMAND__CMD_PUT_TOKEN;
    cmd.put_token = &pt;
    add_command(b, s, &cmd);
    for (uint64_t id = 1; id <= 2; id++) {
        Lc__CreateRun cr = LC__CREATE_RUN__INIT;
        cr.id = id;
        cr.tenant = "default";
        cr.name = id == 1 ? "demo" : "a,\"quoted\"\nname<script>";
        cr.scenario_json = (char *)scenario;
        cr.users = 4;
        cr.created_ms = 1700000000000ull + id;
        cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
        cmd.create_run = &cr;
        add_command(b, s, &cmd);
        Lc__RunState rs = LC__RUN_STATE__INIT;
        rs.run = id;
        rs.state = "running";
        rs.at_ms = 1700000001000ull;
        rs.reason = "";
        cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
        cmd.run_state = &rs;
        add_command(b, s, &cmd);
        Lc__RunGrant g = LC__RUN_GRANT__INIT;
        char *warnings[] = {"generator saturated"};
        g.run = id;
        g.granted = 4;
        g.n_warnings = 1;
        g.warnings = warnings;
        cmd.cmd_case = LC__COMMAND__CMD_RUN_GRANT;
        cmd.run_grant = &g;
        add_command(b, s, &cmd);
        Lc__StatsBatch sb1, sb2;
        stats_batch(&sb1, id, 1, false);
        Lc__StatsBatch *batches[1] = {&sb1};
        Lc__RunSeconds sec = LC__RUN_SECONDS__INIT;
        sec.run = id;
        sec.n_batches = 1;
        sec.batches = batches;
        cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
        cmd.run_seconds = &sec;
        add_command(b, s, &cmd);
        stats_batch(&sb2, id, 2, true);
        batches[0] = &sb2;
        add_command(b, s, &cmd);
        Lc__LeaseRows lease = LC__LEASE_ROWS__INIT; /* a sequential feeder's rows, twice */
        lease.run = id;
        lease.worker = "w1";
        lease.seq = 1;
        lease.count = 3;
        lease.rows = 5;
        cmd.cmd_case = LC__COMMAND__CMD_LEASE_ROWS;
        cmd.lease_rows = &lease;
        add_command(b, s, &cmd);
        lease.seq = 2;
        add_command(b, s, &cmd);
        if (finish && id == 1) {
            Lc__RunFinished fin = LC__RUN_FINISHED__INIT;
            fin.run = id;
            fin.state = "finished";
            fin.at_ms = 1700000009000ull;
            fin.verdict = "pass";
            fin.summary_json = "{\"thresholds\":[{\"metric\":\"http_req_duration\",\"endpoint\":"
                               "null,\"expression\":\"p(95)<500\",\"observed\":12.5,\"passed\":"
                               "true,\"abort_on_fail\":false}]}";
            cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
            cmd.run_finished = &fin;
            add_command(b, s, &cmd);
        }
        if (finish == 2 && id == 1) { /* archived, then merged to 10 s (the state's side) */
            Lc__RetainHistory keep = LC__RETAIN_HISTORY__INIT;
            keep.run = id;
            keep.archive = true;
            cmd.cmd_case = LC__COMMAND__CMD_RETAIN_HISTORY;
            cmd.retain_history = &keep;
            add_command(b, s, &cmd);
            keep.archive = false;
            keep.resolution_s = 10;
            keep.to_t = 600;
            add_command(b, s, &cmd);
        }
    }
}

static void seeds_store(void)
{
    bytes_t b = {0};
    static const char *const names[] = {"running", "finished", "archived"};
    for (int finish = 0; finish <= 2; finish++) {
        store_t *s;
        char err[256];
        if (store_open(&s, err, sizeof err) != 0)
            abort();
        run_commands(&b, s, finish);
        put_bytes("fsm", names[finish], &b);
        uint8_t *image;
        size_t len;
        if (store_serialize(s, &image, &len) != 0)
            abort();
        put("snapshot", names[finish], image, len);
        free(image);
        store_close(s);
    }
}

/* Text formats ---------------------------------------------------------- */

static void seeds_text(void)
{
    put_text("scenario", "demo", scenario);
    put_text("scenario", "open",
             "{\"name\":\"open\",\"target\":\"https://example.com:8443/base/\",\"arrival_rate\":50,"
             "\"max_users\":100,\"stages\":[{\"duration\":\"10s\",\"target\":10},{\"duration\":"
             "\"1m\",\"target\":50}],\"tls\":{\"insecure\":true},\"tasks\":[{\"path\":"
             "\"/u/${user_id}/${iteration}/${uuid}\",\"method\":\"PUT\",\"body\":\"x\"}]}");
    put_text("scenario", "head",
             "{\"name\":\"h\",\"target\":\"http://[::1]:81\",\"duration\":30,\"tasks\":[{\"method\":"
             "\"HEAD\",\"path\":\"/\",\"headers\":{\"Host\":\"a\",\"User-Agent\":\"b\"}}],"
             "\"thresholds\":{\"http_req_failed\":[\"rate<0.01\"]}}");
    put_text("threshold", "k6",
             "{\"http_req_duration{endpoint:list}\":[\"p(95)<500\",{\"threshold\":\"max<2000\","
             "\"abortOnFail\":true,\"delayAbortEval\":\"10s\"}],\"http_req_failed\":"
             "[\"rate<0.01\"],\"http_reqs\":[\"count>=10\",\"rate > 5\"]}");
    put_text("threshold", "legacy", "{\"p95_ms\":500,\"error_rate\":0.05,\"abort_on_fail\":true}");
    put_text("threshold", "expr", "p(99.9) <= 250");
    put_text("threshold", "med", "med!=3");
    static const char *const durations[] = {"30s", "1m30s", "500ms", "5", "1h", "2h5m10s"};
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        char name[8];
        snprintf(name, sizeof name, "%zu", i);
        put_text("duration", name, durations[i]);
    }
    put_text("url", "http", "\x01http://example.com:8080/prefix/");
    put_text("url", "https", "\x02https://[::1]/");
    put_text("url", "hostport", "\x03""10.0.0.1:5557");
    put_text("url", "v6", "\x04[fd00::1]:80");
    put_text("nodes_conf", "example",
             "# id raft worker api\n1 10.0.0.1:5556 10.0.0.1:5557 10.0.0.1:8089\n"
             "2    10.0.0.2:5556     10.0.0.2:5557     10.0.0.2:8089\n\n"
             "3\t[fd00::3]:5556\t[fd00::3]:5557\t[fd00::3]:8089 # third\n");
    put_text("nodes_conf", "one", "7 localhost:1 localhost:2 localhost:3");
    put("hist", "values", hist_bytes, hist_len);
    uint8_t one[] = {1, 5, 5, 5, 0, 1}; /* total, sum, min, max, delta, count */
    put("hist", "one", one, sizeof one);
    put_text("http_server", "get",
             "GET /api/v1/runs/12/history?since=5&endpoint=list%20x HTTP/1.1\r\nHost: m\r\n"
             "Authorization: Bearer lct_fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz\r\n\r\n");
    put_text("http_server", "post",
             "POST /api/v1/runs HTTP/1.1\r\nHost: m\r\nContent-Type: application/json\r\n"
             "Authorization: bearer   lct_x \r\nContent-Length: 7\r\n\r\n{\"a\":1}"
             "GET /healthz HTTP/1.1\r\n\r\n");
    put_text("http_server", "chunked",
             "PUT /api/v1/tenants/t HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3\r\nabc\r\n0\r\n\r\n");
    put_text("response", "length",
             "\x08HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
             "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    put_text("response", "chunked",
             "\x02HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             "4\r\nwiki\r\n0\r\n\r\n");
    put_text("response", "head", "\x05HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    put_text("response", "close",
             "\x02HTTP/1.0 500 Oops\r\nConnection: close\r\nContent-Length: 2\r\n\r\nxyextra");
}

/* Cookies: records of a control byte (host, path, https, clock) and a Set-Cookie value. */
static void add_set_cookie(bytes_t *b, uint8_t ctl, const char *line)
{
    add_u8(b, ctl);
    add_varint(b, strlen(line));
    add(b, line, strlen(line));
}

static void seeds_cookie(void)
{
    enum { HTTPS = 0x40, LATER = 0x80, PATH_FOO_BAR = 2 << 3, PATH_QUERY = 5 << 3 };
    bytes_t b = {0};
    add_set_cookie(&b, HTTPS, "session=abc123; Path=/; Secure; HttpOnly; SameSite=Lax");
    add_set_cookie(&b, HTTPS | 1, "csrf=\"q1\"; Domain=.example.com; Max-Age=3600");
    add_set_cookie(&b, HTTPS | PATH_FOO_BAR, "pref=dark");
    add_set_cookie(&b, HTTPS | LATER | 5, "session=; Max-Age=0");
    put_bytes("cookie", "login", &b);
    add_set_cookie(&b, 0, "a=1; Expires=Sun, 06 Nov 2094 08:49:37 GMT");
    add_set_cookie(&b, 0, "b=2; expires=Sunday, 06-Nov-94 08:49:37 GMT");
    add_set_cookie(&b, 0, "c=3; EXPIRES=Sun Nov  6 08:49:37 2094; Max-Age=2");
    add_set_cookie(&b, LATER | 3, "d=4; Expires=garbage");
    put_bytes("cookie", "dates", &b);
    add_set_cookie(&b, 0, "x=1; Domain=evil.com");
    add_set_cookie(&b, 3, "ip=1; Domain=127.0.0.1");
    add_set_cookie(&b, 7, "n=1; Domain=0.0.1; Path=/foo");
    add_set_cookie(&b, HTTPS, "__Host-id=1; Secure; Path=/");
    add_set_cookie(&b, HTTPS | 4, "v6=1; Domain=::1");
    put_bytes("cookie", "domains", &b);
    add_set_cookie(&b, PATH_QUERY, "q=1");
    add_set_cookie(&b, 6 << 3, "foo=1; Path=/foo");
    add_set_cookie(&b, 0, "bar=1; Path=/foo/bar");
    add_set_cookie(&b, 0, "foo=2; Path=/foo");
    add_set_cookie(&b, HTTPS | LATER | 0x3f, "after=clear");
    put_bytes("cookie", "paths", &b);
}

static void seeds_csv(void)
{
    put_text("csv", "accounts", "name,password\nalice,s3cret\nbob,hunter2\n");
    put_text("csv", "quoted",
             "\xef\xbb\xbf\"a\",b_2,_c\r\n\"x,y\",\"say \"\"hi\"\"\",\"l1\r\nl2\"\r\n,,\xc3\xa9\r\n\r\n");
    put_text("csv", "one_column", "id\n1\n\"\"\n3");
    put_text("csv", "ragged", "a,b,c\n1,2\n");
}

/* TLS: the ClientHello a worker's channel sends first. */
static int grab(void *arg, uint8_t *buf, size_t len)
{
    bytes_t *b = arg;
    if (b->n == 0)
        add(b, buf, len);
    free(buf);
    return 0;
}

static int ignore(void *arg, const uint8_t *data, size_t len) { return 0; }

static void seeds_tls(void)
{
    SSL_CTX *ctx = fuzz_tls_context(false);
    if (ctx == NULL)
        abort();
    for (uint8_t flags = 0; flags < 2; flags++) {
        bytes_t b = {0};
        add_u8(&b, flags);
        bytes_t hello = {0};
        lc_tls_io_t io = {.arg = &hello, .send = grab, .receive = ignore};
        lc_tls_channel_t *ch;
        if (lc_tls_channel_new(&ch, ctx, "localhost", &io) != 0)
            abort();
        add(&b, hello.p, hello.n);
        free(hello.p);
        lc_tls_channel_free(ch);
        put_bytes("tls_server", flags ? "client-hello-bytewise" : "client-hello", &b);
    }
    SSL_CTX_free(ctx);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    root = argv[1];
    make_hist();
    seeds_frames();
    seeds_worker_dispatch();
    seeds_store();
    seeds_text();
    seeds_cookie();
    seeds_csv();
    seeds_tls();
    return 0;
}
