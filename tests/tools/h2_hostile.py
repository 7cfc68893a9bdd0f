#!/usr/bin/python3
"""h2_hostile.py — hostile HTTP/2 clients for test_http2_target_hostile.sh (127.0.0.1 only).

usage: h2_hostile.py garbage PORT SEED [settings]  the client preface (then, with "settings",
                                  a SETTINGS frame), then 4 KiB of random bytes from SEED:
                                  exit 0 when the server closes within 3 s
       h2_hostile.py badpreface PORT   a preface that is wrong after "PRI ": exit 0 on close
       h2_hostile.py hpackbomb PORT    one 4000-byte header indexed, then referenced 200
                                  times in the same block: exit 0 on close without an answer
       h2_hostile.py bigheaders PORT   20 KB of headers on stream 1, a plain request on stream 3
                                  of the same connection: prints both statuses ("431 200")
       h2_hostile.py streams PORT N    N request streams left open (no END_STREAM): prints
                                  how many were refused (RST_STREAM REFUSED_STREAM)
       h2_hostile.py rapidreset PORT N  N streams each reset at once (CVE-2023-44487): exit 0
                                  when the server ends the connection within 5 s
       h2_hostile.py noread PORT N SECONDS  N requests of 16 MiB each with the largest windows,
                                  then read nothing for SECONDS
       h2_hostile.py halfpreface PORT N SECONDS  N connections that send "PRI " and wait
"""
import random
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS = 0x1, 0x4
REFUSED_STREAM, CANCEL = 7, 8


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def hpack_int(n, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if n < limit:
        return bytes([first | n])
    out = [first | limit]
    n -= limit
    while n >= 128:
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


def literal(name, value, index=False):
    """A literal header with a new name: without indexing, or added to the dynamic table."""
    return (b"\x40" if index else b"\x00") + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def request_block(path, method=b"GET"):
    return (literal(b":method", method) + literal(b":scheme", b"http") +
            literal(b":authority", b"127.0.0.1") + literal(b":path", path))


def start(port, settings=True, window=None):
    s = connect(port)
    out = PREFACE
    if settings:
        body = b"" if window is None else struct.pack(">HI", 4, window)
        out += frame(SETTINGS, 0, 0, body)
    if window is not None:
        out += frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", window - 65535))
    s.sendall(out)
    return s


def read_frames(s, seconds):
    """Frames the server sends within seconds; closed is True when it ended the connection."""
    s.settimeout(0.2)
    buf, frames, deadline = b"", [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return frames, True
        if not chunk:
            return frames, True
        buf += chunk
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF, buf[9:9 + length]))
            buf = buf[9 + length:]
    return frames, False


def send_quietly(s, data):
    try:
        s.sendall(data)
    except (ConnectionResetError, BrokenPipeError):
        pass


def garbage(port, seed, settings):
    s = start(port, settings=settings)
    send_quietly(s, random.Random(int(seed)).randbytes(4096))
    frames, closed = read_frames(s, 3)
    print("closed" if closed else "open", "goaway" if any(f[0] == GOAWAY for f in frames) else "")
    return 0 if closed else 1


def badpreface(port):
    s = connect(port)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0))
    _, closed = read_frames(s, 3)
    print("closed" if closed else "open")
    return 0 if closed else 1


def hpackbomb(port):
    s = start(port)
    block = request_block(b"/bomb-headers") + literal(b"x-big", b"a" * 4000, index=True)
    block += bytes([0x80 | 62]) * 200  # the entry just added, again and again: ~800 KB decoded
    send_quietly(s, frame(HEADERS, END_STREAM | END_HEADERS, 1, block))
    frames, closed = read_frames(s, 3)
    answered = any(f[0] == HEADERS and f[2] == 1 for f in frames)
    print("closed" if closed else "open", "answered" if answered else "unanswered")
    return 0 if closed and not answered else 1


def status_of(block):
    """The :status of a response header block as nghttp2 encodes it: indexed 200, or a
    literal with the :status name (index 8) and a raw value; 0 for anything else."""
    if block[:1] == b"\x88":
        return 200
    if len(block) > 2 and block[0] & 0xC0 == 0x40 and block[0] & 0x3F == 8 and block[1] < 0x80:
        return int(block[2:2 + block[1]] or b"0")
    return 0


def bigheaders(port):
    s = start(port)
    block = request_block(b"/big-header") + literal(b"x-big", b"a" * 20000)
    out = frame(HEADERS, END_STREAM, 1, block[:16000]) + frame(CONTINUATION, END_HEADERS, 1, block[16000:])
    out += frame(HEADERS, END_STREAM | END_HEADERS, 3, request_block(b"/after-431"))
    s.sendall(out)
    frames, _ = read_frames(s, 2)
    status = {sid: status_of(p) for t, _, sid, p in frames if t == HEADERS}
    print(status.get(1, 0), status.get(3, 0))
    return 0


def streams(port, n):
    s = start(port)
    out = b"".join(frame(HEADERS, END_HEADERS, 2 * i + 1, request_block(b"/open", b"POST"))
                   for i in range(int(n)))
    send_quietly(s, out)
    frames, _ = read_frames(s, 2)
    refused = sum(1 for f in frames if f[0] == RST_STREAM and int.from_bytes(f[3], "big") == REFUSED_STREAM)
    print(refused)
    return 0


def rapidreset(port, n):
    s = start(port)
    block = request_block(b"/reset-me")
    for i in range(int(n)):
        sid = 2 * i + 1
        if sid > 0x7FFFFFFF:
            break
        send_quietly(s, frame(HEADERS, END_HEADERS, sid, block) + frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL)))
    frames, closed = read_frames(s, 5)
    print("closed" if closed else "open", "goaway" if any(f[0] == GOAWAY for f in frames) else "")
    return 0 if closed else 1


def noread(port, n, seconds):
    s = start(port, window=0x7FFFFFFF)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    out = b"".join(frame(HEADERS, END_STREAM | END_HEADERS, 2 * i + 1, request_block(b"/huge?size=16777216"))
                   for i in range(int(n)))
    send_quietly(s, out)
    time.sleep(float(seconds))
    s.close()
    return 0


def halfpreface(port, n, seconds):
    conns = [connect(port) for _ in range(int(n))]
    for c in conns:
        c.sendall(b"PRI ")
    time.sleep(float(seconds))
    return 0


def main(argv):
    modes = {"garbage": lambda a: garbage(a[0], a[1], len(a) > 2 and a[2] == "settings"),
             "badpreface": lambda a: badpreface(a[0]), "hpackbomb": lambda a: hpackbomb(a[0]),
             "bigheaders": lambda a: bigheaders(a[0]),
             "streams": lambda a: streams(a[0], a[1]), "rapidreset": lambda a: rapidreset(a[0], a[1]),
             "noread": lambda a: noread(a[0], a[1], a[2]),
             "halfpreface": lambda a: halfpreface(a[0], a[1], a[2])}
    if len(argv) < 3 or argv[1] not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    args = [int(argv[2])] + argv[3:]
    return modes[argv[1]](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
