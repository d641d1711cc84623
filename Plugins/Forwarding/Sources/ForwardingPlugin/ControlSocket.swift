import Foundation
import Glibc

/// How `termhost forward stop|retry` reaches the `forward run` processes of the same user, as
/// `ssh -O cancel` reaches a master: each run listens on `run-<pid>.sock` beside its status
/// file. The directory is 0700 and ours (RunDirectory refuses any other), the socket 0600, and
/// a peer of another uid is refused, so only the user who started the run can stop it.
///
/// Protocol: one request line, one reply line, then the connection closes.
///   request  `stop <rule>` or `retry <rule>`; <rule> is a saved rule's ID or a rule's name
///   reply    `ok <what happened>`, `none` (this process runs no such rule) or `error <reason>`
final class ControlSocket: @unchecked Sendable {
    let path: String
    private let fd: Int32
    /// Requests are answered one at a time here; close() waits for the one in progress.
    private let queue = DispatchQueue(label: "termhost.forwarding.control")
    private var source: DispatchSourceRead?
    private var closed = false

    /// Listens at `run-<pid>.sock` in the run directory; `handler` answers each request line.
    init(handler: @escaping @Sendable (String) -> String) throws(ForwardError) {
        let directory = try RunDirectory.prepare()
        path = directory + "/run-\(getpid()).sock"
        var addr = sockaddr_un()
        guard path.utf8.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw ForwardError("the control socket path is too long for a Unix socket: \(path)")
        }
        unlink(path)   // a file left by a process that had this PID and died without cleanup
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ForwardError("cannot create the control socket: \(Sockets.errorText())") }
        ControlSocket.fill(&addr, path)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
            let reason = Sockets.errorText()
            Glibc.close(fd)
            throw ForwardError("cannot listen on the control socket \(path): \(reason)")
        }
        let s = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        s.setEventHandler { [fd] in
            let client = accept(fd, nil, nil)
            guard client >= 0 else {
                // Out of descriptors: the request stays queued in the kernel, and the source
                // would fire again at once. This queue serves the control socket alone, so
                // resting it briefly costs nothing else and stops the spin (as the forwarding
                // listeners pause).
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errno) { usleep(useconds_t(LocalListener.exhaustedPause * 1_000_000)) }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            defer { Glibc.close(client) }
            guard ControlSocket.peerIsUs(client), let line = ControlSocket.readLine(client) else { return }
            ControlSocket.writeAll(client, handler(line) + "\n")
        }
        source = s
        s.resume()
    }

    /// Stops listening and removes the socket file, after the request in progress is answered.
    func close() {
        queue.sync {
            guard !closed else { return }
            closed = true
            source?.cancel()
            Glibc.close(fd)
            unlink(path)
        }
    }

    // MARK: Client side

    /// Sends one request to every live `forward run` of this user; their replies by PID.
    static func request(_ line: String) -> [(pid: pid_t, reply: String)] {
        StatusFile.liveRuns(suffix: ".sock").compactMap { run in exchange(run.path, line).map { (run.pid, $0) } }
    }

    private static func exchange(_ path: String, _ line: String) -> String? {
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { return nil }
        defer { Glibc.close(s) }
        var addr = sockaddr_un()
        fill(&addr, path)
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        writeAll(s, line + "\n")
        return readLine(s, timeout: 10)
    }

    // MARK: Helpers

    private static func fill(_ addr: inout sockaddr_un, _ path: String) {
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
    }

    /// `struct ucred` (pid, uid, gid), which Glibc's Swift overlay does not export.
    private struct PeerCredentials { var pid: Int32 = 0; var uid: UInt32 = 0; var gid: UInt32 = 0 }

    private static func peerIsUs(_ fd: Int32) -> Bool {
        var cred = PeerCredentials()
        var len = socklen_t(MemoryLayout<PeerCredentials>.size)
        return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid()
    }

    /// One line (at most 4 KiB) within `timeout` seconds, without its newline.
    private static func readLine(_ fd: Int32, timeout: Int = 2) -> String? {
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 512)
        while bytes.count < 4096 {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            bytes += buf[0..<n]
            if let nl = bytes.firstIndex(of: 10) { return String(decoding: bytes[..<nl], as: UTF8.self) }
        }
        return nil
    }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
