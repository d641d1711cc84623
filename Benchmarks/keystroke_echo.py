#!/usr/bin/env python3
"""Keystroke echo round trip through an interactive SSH terminal: type one character on a
real pseudo-terminal and time until the remote shell's echo of it comes back.
Usage: keystroke_echo.py N COMMAND [ARG]...   (prints the median and p90 in milliseconds)"""
import os, pty, select, statistics, sys, time

def read_until(fd, token, timeout=15.0):
    buf, deadline = b"", time.time() + timeout
    while token not in buf:
        left = deadline - time.time()
        if left <= 0:
            raise SystemExit("timed out waiting for %r; got %r" % (token, buf[-200:]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SystemExit("the session ended early; got %r" % buf[-200:])
            buf += chunk
    return buf

def main():
    n, argv = int(sys.argv[1]), sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    os.write(fd, b"stty -echoctl; echo RE''ADY\r")
    read_until(fd, b"READY")
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        os.write(fd, b"x")
        read_until(fd, b"x")
        samples.append((time.perf_counter() - start) * 1000)
        os.write(fd, b"\x15")   # ^U clears the line again
        time.sleep(0.01)
        while select.select([fd], [], [], 0.02)[0]:
            os.read(fd, 65536)
    os.write(fd, b"exit\r")
    os.waitpid(pid, 0)
    samples.sort()
    print("median %.2f ms, p90 %.2f ms (%d keystrokes)" % (statistics.median(samples), samples[int(len(samples) * 0.9)], n))
    if os.environ.get("KEYSTROKE_MEDIAN_FILE"):   # for the ratio line of Benchmarks/ssh.sh
        with open(os.environ["KEYSTROKE_MEDIAN_FILE"], "w") as f:
            f.write("%f" % statistics.median(samples))

main()
