import Foundation
import Glibc
import TermhostRegistry

/// A connection to the running daemon, as the CLI (or any client) makes one: check the
/// directory, connect, hello, then one request at a time.
///
/// Connecting never hangs on a dead daemon: a socket with nobody behind it refuses at once
/// (ECONNREFUSED), and every wait for an answer is bounded by `timeout`.
public final class DaemonClient {
    private var connection: DaemonConnection
    /// What the daemon said in its welcome.
    public let welcome: [String: Any]

    public static let defaultTimeout = 10

    public init(_ address: DaemonAddress, client: String, timeout: Int = DaemonClient.defaultTimeout) throws(DaemonError) {
        var st = stat()
        guard lstat(address.directory, &st) == 0 else { throw DaemonError("no daemon is running (no \(address.directory))", notRunning: true) }
        if let refused = PrivateFile.refusal(at: address.directory) { throw DaemonError("the daemon's directory: \(refused)") }
        let sockaddr: sockaddr_un
        switch address.socketAddress() {
        case .success(let a): sockaddr = a
        case .failure(let e): throw e
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .errno("cannot make a socket") }
        var a = sockaddr
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0 else {
            let e = errno
            close(fd)
            if e == ENOENT || e == ECONNREFUSED { throw DaemonError("no daemon is running (nothing listens on \(address.socket))", notRunning: true) }
            throw .errno("cannot connect to the daemon at \(address.socket)", e)
        }
        connection = DaemonConnection(fd: fd)
        connection.setTimeout(SO_RCVTIMEO, seconds: timeout)
        let hello = DaemonProtocol.payload(["protocol": DaemonProtocol.version, "client": client])
        guard connection.send(DaemonFrame(type: DaemonMessage.hello.rawValue, payload: hello)) else {
            close(fd)
            throw .errno("the daemon at \(address.socket) did not take the hello")
        }
        let answered: (DaemonMessage, [String: Any])
        do throws(DaemonError) { answered = try DaemonClient.answer(&connection) } catch {
            close(fd)
            throw error
        }
        guard answered.0 == .welcome else {
            close(fd)
            throw DaemonError("the daemon sent frame type \(answered.0.rawValue) instead of a welcome")
        }
        welcome = answered.1
    }

    deinit { close(connection.fd) }

    /// Sends a request and returns the daemon's reply (an {"error"} reply is thrown).
    public func request(_ operation: String) throws(DaemonError) -> [String: Any] {
        try request(["op": operation])
    }

    /// Sends a request with its fields ("op" among them) and returns the reply; `descriptors`
    /// (up to 8) go with it (SCM_RIGHTS): the daemon gets its own copies.
    public func request(_ fields: [String: Any], passing descriptors: [Int32] = []) throws(DaemonError) -> [String: Any] {
        let frame = DaemonFrame(type: DaemonMessage.request.rawValue, payload: DaemonProtocol.payload(fields))
        let sent = descriptors.isEmpty ? connection.send(frame) : DescriptorPassing.send(connection.fd, frame.encoded(), descriptors: descriptors)
        guard sent else {
            throw .errno("the daemon did not take the request")
        }
        let (type, object) = try DaemonClient.answer(&connection)
        guard type == .reply else { throw DaemonError("the daemon sent frame type \(type.rawValue) instead of a reply") }
        if let error = object["error"] as? String { throw DaemonError("the daemon: \(error)") }
        return object
    }

    // MARK: streaming, after a reply to "attach"

    /// The socket, for a client that polls it beside its terminal.
    public var descriptor: Int32 { connection.fd }

    /// Sends one frame; false when the daemon did not take it (it went away).
    public func send(_ type: DaemonMessage, _ payload: [UInt8]) -> Bool {
        connection.send(DaemonFrame(type: type.rawValue, payload: payload))
    }

    public enum Incoming {
        case frame(type: UInt32, payload: [UInt8])
        case closed
        case failed(String)
    }

    /// The next frame: one already read if there is one, else read now (blocking up to the
    /// receive timeout; poll `descriptor` first to wait for it instead).
    public func receiveFrame(bufferedOnly: Bool = false) -> Incoming? {
        let got: DaemonConnection.Received
        if let buffered = connection.buffered() { got = buffered } else if bufferedOnly { return nil } else { got = connection.receive() }
        switch got {
        case .frame(let f): return .frame(type: f.type, payload: f.payload)
        case .closed: return .closed
        case .malformed(let why): return .failed("the daemon sent \(why)")
        case .failed(let why): return .failed(why)
        }
    }

    /// The next frame of a type this client knows, its JSON object read; a refusal is thrown
    /// with the daemon's reason.
    private static func answer(_ connection: inout DaemonConnection) throws(DaemonError) -> (DaemonMessage, [String: Any]) {
        while true {
            switch connection.receive() {
            case .closed: throw DaemonError("the daemon closed the connection")
            case .malformed(let why): throw DaemonError("the daemon sent \(why)")
            case .failed(let why): throw DaemonError("the daemon: \(why)")
            case .frame(let frame):
                guard let type = DaemonMessage(rawValue: frame.type) else { continue }   // a newer daemon's: skipped
                let object = (try? JSONSerialization.jsonObject(with: Data(frame.payload))) as? [String: Any] ?? [:]
                if type == .refused { throw DaemonError("the daemon refused: \(object["error"] as? String ?? "no reason given")") }
                return (type, object)
            }
        }
    }
}
