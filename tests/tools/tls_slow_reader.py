#!/usr/bin/env python3
"""tls_slow_reader.py — an HTTPS server that lets each request wait in the socket before reading
it, so that a client's writes block part way; it answers with what it got of the body: its first
and last 16 bytes and its length ("head=...;tail=...;len=N;").

Usage: tls_slow_reader.py CERT KEY PORT_FILE [DELAY_S]
Serves 127.0.0.1 on a free port (written to PORT_FILE), one thread per connection, keep-alive,
until killed. For tests/integration/test_tls.sh.
"""
import os
import socket
import ssl
import sys
import threading
import time

HEADERS_MAX = 64 * 1024
BODY_MAX = 4 * 1024 * 1024


def read_request(conn, buf):
    """One request from conn (buf: bytes already read); returns (body, rest) or None at EOF."""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk or len(buf) > HEADERS_MAX:
            return None
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length > BODY_MAX:
        return None
    while len(buf) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return buf[:length], buf[length:]


def serve(raw, ctx, delay):
    buf = b""
    conn = raw
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
        while True:
            time.sleep(delay)  # the client's request piles up in the socket meanwhile
            got = read_request(conn, buf)
            if got is None:
                return
            body, buf = got
            answer = b"head=%s;tail=%s;len=%d;" % (body[:16], body[-16:], len(body))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(answer), answer))
    except (OSError, ssl.SSLError):
        return
    finally:
        conn.close()


def main():
    cert, key, port_file = sys.argv[1:4]
    delay = float(sys.argv[4]) if len(sys.argv) > 4 else 0.2
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A small receive buffer (inherited by each connection): the client's request stops short
    # in its socket instead of fitting whole into loopback's large buffers.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve, args=(raw, ctx, delay), daemon=True).start()


if __name__ == "__main__":
    main()
