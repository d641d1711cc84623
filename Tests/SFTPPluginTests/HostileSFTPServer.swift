import Foundation
import TestSupport

/// A hostile SFTP server: a real sshd whose session runs a small SFTP v3 responder in Python
/// (ForceCommand, which applies to the "sftp" subsystem too) instead of sftp-server. It lists
/// what no real file system can hold (`../../x`, `a/b`, an empty name), a tree without end in
/// depth or in width, and a file of 2^63 bytes, and it can swap a directory the client just
/// made for a symbolic link, as a concurrent process would.
///
/// Its tree: /evil (hostile names and ok.txt, sub/inner.txt), /deep (d/d/d/... forever), /wide
/// (a listing that never ends), /long (a name of 70,000 bytes), /huge.bin (2^63 bytes of zeros), /plant/dir/f.txt (opening it
/// replaces the local directory `plant.link` by a link to `plant.to`).
enum HostileSFTPServer {
    /// The SSH harness with the SFTP plugin, whose server speaks this script.
    static func harness(_ dir: TemporaryDirectory, plant: (link: String, to: String)? = nil) throws -> SSHHarness {
        let script = dir.write("hostile-sftp.py", source)
        var config: [String: Any] = [:]
        if let plant { config["plant"] = ["link": plant.link, "to": plant.to] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: config), as: UTF8.self)
        let configPath = dir.write("hostile-sftp.json", json)
        let h = try SSHHarness(dir: dir, serverConfig: "ForceCommand /usr/bin/python3 \(script) \(configPath)")
        try Fixtures.sftpPlugin(in: h.plugins)
        return h
    }

    static let source = #"""
# A hostile SFTP v3 server on stdin/stdout, for termhost's tests: sshd runs it as the session's
# command (ForceCommand), so the client's "sftp" subsystem talks to it. It serves a made-up tree
# whose names and sizes no real file system would hold.
# argv[1]: a JSON file: {"plant": {"link": PATH, "to": TARGET}} (optional).
import json, os, struct, sys

cfg = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else {}
inp, out = sys.stdin.buffer, sys.stdout.buffer
DIR, REG = 0o040755, 0o100644

def tree(path):
    # (kind, entries or size) for a path, or None.
    p = path.rstrip("/") or "/"
    if p in ("/", "/home"): return ("dir", ["evil", "deep", "wide", "huge.bin", "plant"])
    if p == "/evil":
        return ("dir", [".", "..", "../../x", "a/b", "/abs", "", "bad\nname", "esc\x1b[31mred", "ok.txt", "sub"])
    if p == "/evil/sub": return ("dir", ["inner.txt", "../../../escaped"])
    if p.startswith("/deep") and all(c == "d" for c in p[len("/deep"):].split("/")[1:]):
        return ("dir", ["d"])
    if p == "/wide": return ("endless", None)
    if p == "/long": return ("dir", ["a" * 70000, "ok.txt"])
    if p == "/huge.bin": return ("file", 1 << 63)
    if p == "/plant": return ("dir", ["dir"])
    if p == "/plant/dir": return ("dir", ["f.txt"])
    if p.startswith("/") and "/" in p[1:] or p in ("/ok.txt",):
        return ("file", 5)
    return None

def s(b): return struct.pack(">I", len(b)) + b
def attrs(kind, size):
    if kind in ("dir", "endless"): return struct.pack(">IIII", 4 | 8, DIR, 1700000000, 1700000000)
    return struct.pack(">IQIII", 1 | 4 | 8, size, REG, 1700000000, 1700000000)
def send(t, body): out.write(struct.pack(">IB", len(body) + 1, t) + body); out.flush()
def status(i, code, msg=b""): send(101, struct.pack(">II", i, code) + s(msg) + s(b""))

def read(n):
    b = b""
    while len(b) < n:
        c = inp.read(n - len(b))
        if not c: sys.exit(0)
        b += c
    return b

handles, counter = {}, [0]
while True:
    n, = struct.unpack(">I", read(4))
    pkt = read(n)
    t, body = pkt[0], pkt[1:]
    if t == 1: send(2, struct.pack(">I", 3)); continue
    i, = struct.unpack(">I", body[:4]); rest = body[4:]
    def string(off):
        l, = struct.unpack(">I", rest[off:off + 4]); return rest[off + 4:off + 4 + l], off + 4 + l
    if t in (7, 17, 16, 11, 3):
        raw, _ = string(0); path = raw.decode("utf-8", "replace")
        if path in ("", "."): path = "/"
        node = tree(path)
        if node is None: status(i, 2, b"No such file"); continue
        if t == 16: send(104, struct.pack(">II", i, 1) + s(path.encode()) + s(path.encode()) + attrs(*node)); continue
        if t in (7, 17): send(105, struct.pack(">I", i) + attrs(*node)); continue
        if t == 3 and "plant" in cfg and path == "/plant/dir/f.txt":
            # Another process swaps the directory the client just made for a link.
            p = cfg["plant"]
            os.rmdir(p["link"]); os.symlink(p["to"], p["link"])
        counter[0] += 1; h = b"h%d" % counter[0]
        handles[h] = {"path": path, "node": node, "next": 0}
        send(102, struct.pack(">I", i) + s(h)); continue
    if t in (4, 8, 5, 12):
        h, off = string(0); st = handles.get(h)
        if st is None: status(i, 4, b"bad handle"); continue
        if t == 4: handles.pop(h, None); status(i, 0); continue
        if t == 8: send(105, struct.pack(">I", i) + attrs(*st["node"])); continue
        if t == 5:
            offset, length = struct.unpack(">QI", rest[off:off + 12])
            kind, size = st["node"]
            if offset >= size: status(i, 1, b"EOF"); continue
            data = b"x" * min(length, size - offset, 32768) if size == 5 else b"\0" * min(length, 32768)
            send(103, struct.pack(">I", i) + s(data)); continue
        kind, entries = st["node"]
        if kind == "endless":
            start = st["next"]; st["next"] += 2000
            names = [("n%09d" % k, ("file", 1)) for k in range(start, start + 2000)]
        else:
            if st["next"]: status(i, 1, b"EOF"); continue
            st["next"] = 1
            names = [(e, tree(st["path"].rstrip("/") + "/" + e) or ("file", 5)) for e in entries]
            # The names the server lists are its word: a name with "/" is listed as a plain file.
            names = [(e, (k if "/" not in e and e not in ("", ".", "..") else ("file", 5))) for e, k in names]
            names = [(e, (("dir", None) if e in (".", "..") else k)) for e, k in names]
        body = struct.pack(">II", i, len(names))
        for e, (k, v) in names:
            body += s(e.encode()) + s(e.encode()) + attrs(k, v if k == "file" else 0)
        send(104, body); continue
    status(i, 8, b"unsupported")
"""#
}
