#!/usr/bin/env python3
"""raft_attacker.py — plays an outsider on a master's Raft port (loopback tests).

Modes:
  vote     canonical/raft 0.15's TCP handshake (protocol 1, a server id, an
           address), then a RequestVote with a huge term that asks to disrupt
           the leader: on an open Raft port this raises every master's term.
  garbage  random bytes.
  silent   connect and say nothing.
With --tls-cert/--tls-key/--tls-ca it first completes a TLS handshake (a
client certificate, the master's certificate checked against the CA) and
speaks raft inside it; --id and --address say whom the handshake claims to be.
A TLS handshake the master refuses also prints "closed after ...".
Prints one line: "closed after S.SS s, got N bytes" when the master closed the
connection, "open after S.SS s, got N bytes" when it was still open at --wait.
"""
import argparse
import os
import socket
import ssl
import struct
import sys
import time

RAFT_IO_REQUEST_VOTE = 3
HUGE_TERM = 1 << 40


def vote_bytes(server_id, address):
    address = address.encode() + b"\0"
    address += b"\0" * (-len(address) % 8)
    handshake = struct.pack("<QQQ", 1, server_id, len(address)) + address
    body = struct.pack("<QQQQQ", HUGE_TERM, server_id, 1 << 30, HUGE_TERM, 1)  # flags: disrupt leader
    return handshake + struct.pack("<QQ", RAFT_IO_REQUEST_VOTE, len(body)) + body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connect", required=True, help="host:port")
    ap.add_argument("--mode", choices=["vote", "garbage", "silent"], required=True)
    ap.add_argument("--wait", type=float, default=8.0, help="seconds to wait for the close")
    ap.add_argument("--id", type=int, default=2, help="the server id the handshake claims")
    ap.add_argument("--address", default="127.0.0.1:1", help="the raft address it claims")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--tls-ca")
    a = ap.parse_args()
    host, port = a.connect.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=3)
    start = time.monotonic()
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        ctx.load_verify_locations(a.tls_ca)
        ctx.check_hostname = False
        try:
            s = ctx.wrap_socket(s, server_hostname=host)
        except (ssl.SSLError, OSError) as e:
            print("closed after %.2f s, got 0 bytes (TLS handshake: %s)" %
                  (time.monotonic() - start, e))
            return 0
    try:
        if a.mode == "vote":
            s.sendall(vote_bytes(a.id, a.address))
        elif a.mode == "garbage":
            s.sendall(os.urandom(4096))
    except OSError:
        pass  # closed while we were still writing: that is a close too
    got, closed = 0, False
    deadline = start + a.wait
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ssl.SSLError:  # an alert or a broken record: the master ended it
            closed = True
            break
        except OSError:  # reset: the master closed with our bytes unread
            closed = True
            break
        if not chunk:
            closed = True
            break
        got += len(chunk)
    s.close()
    print("%s after %.2f s, got %d bytes" % ("closed" if closed else "open",
                                              time.monotonic() - start, got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
