#!/usr/bin/python3
"""http_hostile.py — hostile HTTP clients for test_api_hostile.sh (127.0.0.1 only).

usage: http_hostile.py slow PORT N SECONDS      N connections that trickle one header
                                                byte each every 0.5 s, for SECONDS
       http_hostile.py probe PORT PATH          GET PATH on a new connection: prints
                                                "<status> <ms>", exit 0 on 200 within 1 s
       http_hostile.py early401 PORT TOKEN      POST a 1 MiB body's headers with TOKEN and
                                                send no body: exit 0 when 401 comes first
       http_hostile.py raw PORT TOKEN METHOD PATH   PATH with \\xNN escapes, sent as bytes;
                                                prints "<status> <Location or -> <body>"
"""
import socket
import sys
import time


def connect(port, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_response(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    want = int(headers.get("content-length", "0"))
    while len(body) < want:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def slow(port, n, seconds):
    conns = []
    for _ in range(n):
        try:
            s = connect(port)
            s.sendall(b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            conns.append(s)
        except OSError:
            pass
    print("opened %d" % len(conns), flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end and conns:
        for s in list(conns):
            try:
                s.send(b"a")
            except OSError:
                conns.remove(s)
                s.close()
        time.sleep(0.5)
    for s in conns:
        s.close()


def probe(port, path):
    t0 = time.monotonic()
    try:
        s = connect(port, timeout=2.0)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
        status, _, _ = read_response(s)
        s.close()
    except OSError:
        status = 0
    ms = (time.monotonic() - t0) * 1000
    print("%d %.0f" % (status, ms))
    return 0 if status == 200 and ms < 1000 else 1


def early401(port, token):
    s = connect(port, timeout=2.0)
    s.sendall(("POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % (token, 1 << 20)).encode())
    try:
        status, _, body = read_response(s)  # before a single body byte is sent
    except socket.timeout:
        print("no answer within 2 s without the body")
        return 1
    print("%d %s" % (status, body.decode("utf-8", "replace")))
    return 0 if status == 401 else 1


def raw(port, token, method, path):
    target = path.encode("latin-1").decode("unicode_escape").encode("latin-1")
    s = connect(port)
    auth = ("Authorization: Bearer %s\r\n" % token).encode() if token else b""
    s.sendall(method.encode() + b" " + target + b" HTTP/1.1\r\nHost: x\r\n" + auth +
              b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    status, headers, body = read_response(s)
    sys.stdout.buffer.write(b"%d %s %s\n" % (status, headers.get("location", "-").encode(), body))
    return 0


def main(argv):
    cmd, port = argv[1], int(argv[2])
    if cmd == "slow":
        return slow(port, int(argv[3]), float(argv[4])) or 0
    if cmd == "probe":
        return probe(port, argv[3])
    if cmd == "early401":
        return early401(port, argv[3])
    if cmd == "raw":
        return raw(port, argv[3], argv[4], argv[5])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
