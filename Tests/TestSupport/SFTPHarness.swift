import Foundation
import Glibc

/// The SSH harness with the SFTP plugin beside the SSH plugin, and helpers for files.
extension SSHHarness {
    public static func withSFTP(_ dir: TemporaryDirectory, policy: String? = nil) throws -> SSHHarness {
        let h = try SSHHarness(dir: dir)
        try Fixtures.sftpPlugin(in: h.plugins)
        if let policy { _ = dir.write("policy.json", policy) }
        return h
    }

    /// "user@127.0.0.1:path": the port goes separately, as -P.
    public func remote(_ path: String, user: String = NSUserName()) -> String { "\(user)@127.0.0.1:\(path)" }

    /// termhost sftp VERB ARGS... -P PORT
    @discardableResult
    public func sftp(_ verb: String, _ args: [String], stdin: String? = nil) throws -> Shell.Result {
        try termhost(["sftp", verb] + args + ["-P", String(server.port)], stdin: stdin)
    }

    /// termhost sftp VERB ARGS... -P PORT, running in the background.
    public func sftpInBackground(_ verb: String, _ args: [String]) throws -> Background {
        try Background(Paths.termhost, ["sftp", verb] + args + ["-P", String(server.port)], environment: environment)
    }
}

public enum Files {
    /// A file of random bytes (from /dev/urandom: a byte-by-byte generator takes seconds per
    /// MiB in a debug build).
    public static func random(_ path: String, bytes: Int, mode: mode_t = 0o644) {
        let data = FileHandle(forReadingAtPath: "/dev/urandom").map { try? $0.read(upToCount: bytes) } ?? nil
        _ = FileManager.default.createFile(atPath: path, contents: data ?? Data(count: bytes), attributes: [.posixPermissions: Int(mode)])
    }

    public static func sha256(_ path: String) -> String {
        (try? Shell.run("/usr/bin/sha256sum", [path]).stdout.split(separator: " ").first.map(String.init)) ?? "missing"
    }

    public static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
    }

    public static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Every entry under root (relative path -> "dir", a file's SHA-256, or "link -> target").
    public static func tree(_ root: String) -> [String: String] {
        var out: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return out }
        while let rel = walker.nextObject() as? String {
            let path = root + "/" + rel
            var st = stat()
            lstat(path, &st)
            switch st.st_mode & S_IFMT {
            case S_IFDIR: out[rel] = "dir"
            case S_IFLNK: out[rel] = "link -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            default: out[rel] = sha256(path)
            }
        }
        return out
    }

    /// Waits until a file grows to at least `bytes` (a transfer under way).
    public static func waitForSize(_ path: String, atLeast bytes: Int, timeout: Double = 60) -> Bool {
        Wait.until(timeout: timeout) { size(path) >= bytes }
    }

    /// How many bytes from the start of a (sparse) file are written: the first hole's offset.
    public static func writtenPrefix(_ path: String) -> Int {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let seekHole: Int32 = 4   // SEEK_HOLE: Linux's value; Glibc exports it only with _GNU_SOURCE
        return max(0, Int(lseek(fd, 0, seekHole)))
    }

    public static func partial(of path: String) -> String {
        (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".termhost-partial"
    }
}

extension Background {
    /// Waits for the process to end; its status and both outputs.
    public func finish() -> (status: Int32, stdout: String, stderr: String) {
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = errorOutput()
        process.waitUntilExit()
        return (process.terminationStatus, out, err)
    }
}
