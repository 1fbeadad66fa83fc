"""One host's TCP traffic for `vlanroute emulate --traffic`: stdlib only, run by path in the
host's network namespace (`ip netns exec NS python3 -S flowagent.py ...`).

It listens on PORT, prints `ready`, reads START (an epoch time) from its standard input
(so that a slow start of one agent delays them all alike), connects to every address of
--to at START, sends
zeros on every connection until the end, and counts the bytes each peer delivered to it
between START + WARMUP and START + WARMUP + SECONDS (the steady state: after slow start and
the first queue build-up). It prints one JSON object: peer address -> bytes in the window.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import sys
import time

CHUNK = bytes(65536)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--to", default="")
    ap.add_argument("--warmup", type=float, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    a = ap.parse_args(argv)
    sel = selectors.DefaultSelector()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((a.listen, a.port))
    server.listen(512)
    server.setblocking(False)
    sel.register(server, selectors.EVENT_READ, "accept")
    got: dict[str, int] = {}
    targets = [t for t in a.to.split(",") if t]
    print("ready", flush=True)
    start = float(sys.stdin.readline())
    begin, end = start + a.warmup, start + a.warmup + a.seconds
    time.sleep(max(0.0, start - time.time()))
    for t in targets:
        c = socket.socket()
        c.bind((a.listen, 0))           # the receiver tells its peers apart by source address
        c.setblocking(False)
        c.connect_ex((t, a.port))
        sel.register(c, selectors.EVENT_WRITE, "send")
    while time.time() < end + 0.3:
        for key, _events in sel.select(timeout=0.05):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if key.data == "accept":
                conn, peer = sock.accept()
                conn.setblocking(False)
                got.setdefault(peer[0], 0)
                sel.register(conn, selectors.EVENT_READ, ("recv", peer[0]))
            elif key.data == "send":
                try:
                    sock.send(CHUNK)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    sel.unregister(sock)
            else:
                try:
                    data = sock.recv(262144)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(sock)
                    continue
                now = time.time()
                if begin <= now <= end:
                    got[key.data[1]] += len(data)
    print(json.dumps(got))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
