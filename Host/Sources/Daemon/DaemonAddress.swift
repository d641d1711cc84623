import Foundation
import Glibc

/// Where the daemon listens: `$XDG_RUNTIME_DIR/termhost/daemon.sock`, the per-user runtime
/// directory systemd makes (0700, local, gone at the last logout); without one,
/// `/tmp/termhost-UID/`, as tmux falls back to `/tmp/tmux-UID/`. The directory is the daemon's
/// own, 0700, checked on every start and every connect (PrivateFile): the socket is the key to
/// every live session, so no one else may be able to reach it or put one of their own there.
public struct DaemonAddress: Sendable, Equatable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public var socket: String { directory + "/daemon.sock" }
    /// Held (flock) by the running daemon; holds its pid for messages.
    public var lock: String { directory + "/daemon.lock" }

    public static func standard(_ env: [String: String] = ProcessInfo.processInfo.environment) -> DaemonAddress {
        if let run = env["XDG_RUNTIME_DIR"], run.hasPrefix("/"), !run.contains("\0") {
            return DaemonAddress(directory: (run.hasSuffix("/") ? String(run.dropLast()) : run) + "/termhost")
        }
        return DaemonAddress(directory: "/tmp/termhost-\(geteuid())")
    }

    /// A socket address for `socket`, or why there is none (sockaddr_un holds 107 bytes).
    func socketAddress() -> Result<sockaddr_un, DaemonError> {
        socketAddress(of: socket)
    }

    func socketAddress(of path: String) -> Result<sockaddr_un, DaemonError> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            return .failure(DaemonError("the daemon's socket path \(path) is \(bytes.count) bytes, longer than a Unix socket allows (\(capacity - 1)): set XDG_RUNTIME_DIR to a shorter directory"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return .success(address)
    }
}

/// A daemon or client failure, one line naming the thing at fault.
public struct DaemonError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// No daemon listens (no socket, or nobody behind it): the one failure a client may answer
    /// by starting one.
    public let notRunning: Bool

    public init(_ description: String, notRunning: Bool = false) {
        self.description = description
        self.notRunning = notRunning
    }

    static func errno(_ what: String, _ code: Int32 = Glibc.errno) -> DaemonError {
        DaemonError("\(what): \(String(cString: strerror(code)))")
    }
}
