import Foundation
import Glibc
import TermhostDaemon
import TestSupport

/// A `termhost daemon` started for one test, in a scratch environment, its log in a file the
/// test can read while it runs.
final class DaemonHarness {
    let dir = TemporaryDirectory("termhost-daemon")
    let environment: [String: String]
    let address: DaemonAddress
    var logPath: String { dir.path + "/daemon.log" }
    private(set) var pid: pid_t = 0

    init() {
        environment = Fixtures.environment(dir, pluginPath: dir.sub("plugins"))
        address = DaemonAddress.standard(environment)
    }

    /// A daemon in another harness's environment (an SSHHarness's: its HOME, keys and plugins).
    init(environment: [String: String]) {
        self.environment = environment
        address = DaemonAddress.standard(environment)
    }

    /// Starts the daemon and waits until it answers `daemon status`.
    func start() throws {
        let script = "exec \"$0\" daemon 2>>\"$1\""
        let process = try Background("/bin/sh", ["-c", script, Paths.termhost, logPath], environment: environment)
        pid = process.process.processIdentifier
        guard Wait.until(timeout: 120, { (try? run("daemon", "status").status) == 0 }) else {
            throw Shell.Failure(description: "the daemon did not answer: \(log)")
        }
    }

    @discardableResult
    func run(_ args: String..., timeout: Double = 60) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: environment, timeout: timeout)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Whether the daemon's process has ended (reaped by Foundation's Process).
    var ended: Bool { kill(pid, 0) != 0 }

    func remove() {
        if pid > 0 && !ended { ProcessTree.kill(pid) }
        dir.remove()
    }

    /// Stops the daemon with `daemon stop` (then by signal if it did not end).
    func stop() {
        _ = try? run("daemon", "stop")
        if pid > 0 && !Wait.until(timeout: 30, { self.ended }) { ProcessTree.kill(pid) }
    }
}

/// A client that speaks the protocol's frames by hand, to send what the CLI never would.
/// One thread uses it at a time (the never-reading test hands it to its writer thread).
final class RawClient: @unchecked Sendable {
    let fd: Int32
    private var decoder = DaemonFrameDecoder()

    init(_ address: DaemonAddress) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        let path = Array(address.socket.utf8)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in path.enumerated() { raw[i] = b } }
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0 else { close(fd); throw Shell.Failure(description: "connect: \(String(cString: strerror(errno)))") }
        var t = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            sent += n
        }
    }

    func send(_ type: DaemonMessage, _ json: String) { send(DaemonFrame(type: type.rawValue, payload: Array(json.utf8)).encoded()) }

    func hello() { send(.hello, #"{"protocol":1,"client":"raw test client"}"#) }

    /// The next frame, or nil when the daemon closed the connection.
    func receive() -> DaemonFrame? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if case .frame(let f) = decoder.next() { return f }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return nil }
            decoder.feed(chunk[0..<n])
        }
    }

    /// The next frame's payload as text.
    func receiveText() -> String? { receive().map { String(decoding: $0.payload, as: UTF8.self) } }

    /// A request and its reply's JSON object.
    func request(_ json: String) -> [String: Any] {
        send(.request, json)
        guard let reply = receive() else { return ["error": "the daemon closed the connection"] }
        return (try? JSONSerialization.jsonObject(with: Data(reply.payload))) as? [String: Any] ?? [:]
    }
}
