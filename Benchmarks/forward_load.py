#!/usr/bin/env python3
"""Load for Benchmarks/forwarding.sh: a target server, and clients that go through a forward.

  forward_load.py serve PORTFILE         target on 127.0.0.1 (port written to PORTFILE); each
                                         connection starts with one byte: S = sink (read to EOF,
                                         then answer b"k"), E = echo (until EOF), D = source (a
                                         16-byte decimal count follows; sends that many bytes)
  forward_load.py throughput PORT MIB    one stream of MIB MiB through PORT; prints seconds
  forward_load.py download PORT MIB      one stream of MIB MiB from the target back through
                                         PORT (the other direction); prints seconds
  forward_load.py parallel PORT N MIB    N streams sharing MIB MiB; prints seconds
  forward_load.py latency PORT RUNS      connect + 1-byte echo, RUNS times; prints the median ms
"""
import socket, sys, threading, time

CHUNK = 1 << 20


def serve(portfile):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(256)
    with open(portfile, "w") as f:
        f.write(str(s.getsockname()[1]))
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


def handle(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    mode = c.recv(1)
    buf = bytearray(CHUNK)
    if mode == b"S":
        while c.recv_into(buf):
            pass
        c.sendall(b"k")
    elif mode == b"D":
        count = b""
        while len(count) < 16:
            part = c.recv(16 - len(count))
            if not part:
                break
            count += part
        left = int(count)
        block = bytes(CHUNK)
        while left > 0:
            n = min(left, CHUNK)
            c.sendall(block[:n])
            left -= n
    elif mode == b"E":
        while True:
            n = c.recv_into(buf)
            if not n:
                break
            c.sendall(memoryview(buf)[:n])
    c.close()


def sink_stream(port, nbytes):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"S")
    block = b"\0" * CHUNK
    left = nbytes
    while left > 0:
        n = min(left, CHUNK)
        c.sendall(block[:n])
        left -= n
    c.shutdown(socket.SHUT_WR)
    ack = c.recv(1)
    c.close()
    if ack != b"k":
        raise SystemExit("stream did not complete (no acknowledgement from the target)")


def source_stream(port, nbytes):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"D" + b"%16d" % nbytes)
    buf = bytearray(CHUNK)
    got = 0
    while True:
        n = c.recv_into(buf)
        if not n:
            break
        got += n
    c.close()
    if got != nbytes:
        raise SystemExit("stream did not complete: %d of %d bytes" % (got, nbytes))


def main():
    mode = sys.argv[1]
    if mode == "serve":
        serve(sys.argv[2])
    elif mode == "throughput":
        port, mib = int(sys.argv[2]), int(sys.argv[3])
        start = time.monotonic()
        sink_stream(port, mib * CHUNK)
        print("%.3f" % (time.monotonic() - start))
    elif mode == "download":
        port, mib = int(sys.argv[2]), int(sys.argv[3])
        start = time.monotonic()
        source_stream(port, mib * CHUNK)
        print("%.3f" % (time.monotonic() - start))
    elif mode == "parallel":
        port, n, mib = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        each = mib * CHUNK // n
        failures = []

        def stream():
            try:
                sink_stream(port, each)
            except (OSError, SystemExit) as e:
                failures.append(str(e))

        threads = [threading.Thread(target=stream) for _ in range(n)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise SystemExit("%d of %d streams failed: %s" % (len(failures), n, failures[0]))
        print("%.3f" % (time.monotonic() - start))
    elif mode == "latency":
        port, runs = int(sys.argv[2]), int(sys.argv[3])
        times = []
        for _ in range(runs):
            start = time.monotonic()
            c = socket.create_connection(("127.0.0.1", port))
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c.sendall(b"Ex")
            if c.recv(1) != b"x":
                raise SystemExit("no echo through the forward")
            times.append(time.monotonic() - start)
            c.close()
        times.sort()
        print("%.2f" % (times[len(times) // 2] * 1000))


main()
