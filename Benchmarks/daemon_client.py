#!/usr/bin/env python3
"""A client of the termhost daemon's socket protocol (Docs/Daemon.md) for Benchmarks/daemon.sh.

  daemon_client.py open HOST [--remote-tmux]      open a session, print its ID
  daemon_client.py fill ID BYTES                  make the session print BYTES of output, wait for it
  daemon_client.py attach-time ID RUNS            ms from connect to the last replayed byte (median, max)
  daemon_client.py rss                            the daemon's resident memory and CPU seconds so far
  daemon_client.py mirrors ID N MIB [--slow]      N attached clients read MIB of output; with --slow one
                                                  more attaches and never reads; prints MiB/s of the
                                                  first reader
"""
import json, os, socket, statistics, struct, sys, threading, time

def path():
    run = os.environ.get("XDG_RUNTIME_DIR")
    return f"{run}/termhost/daemon.sock" if run else f"/tmp/termhost-{os.getuid()}/daemon.sock"

class Client:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path())
        self.send(1, {"protocol": 1, "client": "daemon benchmark"})
        self.welcome = self.recv()

    def send(self, t, obj=None, raw=None):
        body = raw if raw is not None else json.dumps(obj).encode()
        self.s.sendall(struct.pack(">II", len(body), t) + body)

    def recv(self):
        head = self.s.recv(8, socket.MSG_WAITALL)
        if len(head) < 8:
            return None, None
        n, t = struct.unpack(">II", head)
        body = b""
        while len(body) < n:
            chunk = self.s.recv(n - len(body))
            if not chunk:
                return None, None
            body += chunk
        return t, body

    def request(self, obj):
        self.send(16, obj)
        t, body = self.recv()
        reply = json.loads(body)
        if "error" in reply:
            raise SystemExit("daemon: " + reply["error"])
        return reply

    def attach(self, sid):
        return self.request({"op": "attach", "session": sid})

def status():
    return Client().request({"op": "status"})

def main():
    cmd = sys.argv[1]
    if cmd == "open":
        request = {"host": sys.argv[2], "columns": 200, "rows": 50}
        if "--remote-tmux" in sys.argv:
            request["remoteTmux"] = True
        print(Client().request({"op": "open", "request": request})["session"]["id"])
    elif cmd == "fill":
        sid, size = sys.argv[2], int(sys.argv[3])
        c = Client(); c.attach(sid)
        marker = b"FILLED%d" % (time.time_ns() % 100000)
        command = "head -c %d /dev/zero | tr '\\0' x; echo; echo %s\n" % (size, marker.decode().replace("FILLED", "FILL''ED"))
        c.send(34, raw=command.encode())
        seen = b""
        while marker not in seen:
            t, body = c.recv()
            if t is None:
                raise SystemExit("the session ended while filling")
            if t == 32:
                seen = (seen + body)[-64:]
    elif cmd == "attach-time":
        sid, runs = sys.argv[2], int(sys.argv[3])
        listed = [x for x in Client().request({"op": "sessions"})["sessions"] if x["id"] == sid][0]
        replay = listed["ringBytes"] + 4   # the soft reset, then the ring, in frames of up to 256 KiB
        samples, size = [], 0
        for _ in range(runs):
            start = time.perf_counter()
            c = Client(); c.attach(sid)
            size = 0
            while size < replay:
                t, body = c.recv()
                if t is None:
                    raise SystemExit("the daemon closed the attachment during the replay")
                if t == 32:
                    size += len(body)
            samples.append((time.perf_counter() - start) * 1000)
            c.send(36, raw=b"")
            c.s.close()
        print("attach with a %.2f MiB replay: median %.1f ms, max %.1f ms (%d attaches)"
              % (size / 1048576, statistics.median(samples), max(samples), runs))
    elif cmd == "rss":
        pid = status()["pid"]
        rss = [l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1]
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        print("daemon RSS %.1f MiB, CPU %.2f s" % (int(rss) / 1024, cpu))
    elif cmd == "mirrors":
        sid, n, mib = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        slow = None
        if "--slow" in sys.argv:
            slow = Client(); slow.send(16, {"op": "attach", "session": sid})   # never reads again
        readers = [Client() for _ in range(n)]
        for r in readers:
            r.attach(sid)
            r.recv()   # the replay
        marker = b"MIRRORED%d" % (time.time_ns() % 100000)
        done = [None] * n
        def read(i):
            seen, got = b"", 0
            while marker not in seen:
                t, body = readers[i].recv()
                if t is None:
                    return
                if t == 32:
                    seen = (seen + body)[-64:]
                    got += len(body)
            done[i] = (time.perf_counter(), got)
        threads = [threading.Thread(target=read, args=(i,)) for i in range(n)]
        for t in threads: t.start()
        start = time.perf_counter()
        command = "head -c %d /dev/zero | tr '\\0' x; echo; echo %s\n" % (mib << 20, marker.decode().replace("MIRRORED", "MIRROR''ED"))
        readers[0].send(34, raw=command.encode())
        for t in threads: t.join()
        finished = [d for d in done if d]
        rate = min((got / 1048576) / (end - start) for end, got in finished) if finished else 0
        print("%d mirrors%s: slowest reader %.1f MiB/s, %d of %d got everything"
              % (n, " + 1 client that never reads" if slow else "", rate, len(finished), n))
        if os.environ.get("MIRROR_RATE_FILE"):
            with open(os.environ["MIRROR_RATE_FILE"], "w") as f:
                f.write("%f" % rate)
    else:
        raise SystemExit(__doc__)

main()
