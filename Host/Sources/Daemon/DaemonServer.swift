import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// The daemon's protocol loop: accepts clients on the listener, checks who they are, and answers
/// their requests, one thread per client (so a slow or stuck client holds only its own thread).
///
/// Per client: the kernel's peer credentials must be the daemon's own uid (root is not let in:
/// root can read any file anyway, but a root process talking to a user's daemon is more often a
/// mistake, sudo with a kept environment, than a need, and it would act as the user); the first
/// frame must be a hello of this protocol's major within `DaemonConnection.helloTimeout`; then
/// requests, each answered in order. A malformed frame, a truncated stream or a client that does
/// not read its replies ends that client only, and is logged.
public final class DaemonServer: Sendable {
    /// What the daemon adds to `status` (its runtime: plugins loaded, scenes).
    public typealias StatusSource = @Sendable () -> [String: Any]

    public let listener: DaemonListener
    private let version: String
    private let extraStatus: StatusSource
    let log: @Sendable (String) -> Void
    /// The persistent terminal sessions, when a feature provides them (DaemonServer+Sessions).
    let sessions: TerminalSessions?
    /// Runs the CLI's commands in the daemon (DaemonServer+Run); nil runs none.
    let runner: CommandRunner?
    /// A scene per persistent session (DaemonServer+Sessions), and what the hooks were told.
    let sceneHooks: SessionSceneHooks?
    let sessionScenes = Mutex<(known: Set<String>, clients: [String: Int])>(([], [:]))
    private let started = Date()

    private struct State {
        var stopping = false
        var clients: [Int32: String] = [:]   // fd → the client's name
        var served = 0
    }
    private let state = Mutex(State())

    /// Clients at once; more are refused with the reason.
    public static let maxClients = 64
    public static let operations = ["status", "stop", "run"] + DaemonServer.sessionOperations

    public init(listener: DaemonListener, version: String, sessions: TerminalSessions? = nil, runner: CommandRunner? = nil,
                sceneHooks: SessionSceneHooks? = nil, status: @escaping StatusSource, log: @escaping @Sendable (String) -> Void) {
        self.listener = listener
        self.sessions = sessions
        self.runner = runner
        self.sceneHooks = sceneHooks
        self.version = version
        self.extraStatus = status
        self.log = log
    }

    /// Accepts and serves until `stop()`; then ends every client's connection and returns.
    public func run() {
        reconcileScenes()   // sessions a previous daemon left, restored by their provider
        while let (fd, peer) = listener.accept() {
            guard peer.uid == geteuid() else {
                log("refused a client of uid \(peer.uid) (pid \(peer.pid)): only uid \(geteuid()), the daemon's own, may connect")
                refuse(fd, "this daemon serves only uid \(geteuid()), its own")
                continue
            }
            let admitted = state.withLock { s -> Bool in
                guard !s.stopping, s.clients.count < DaemonServer.maxClients else { return false }
                s.clients[fd] = "pid \(peer.pid)"
                s.served += 1
                return true
            }
            guard admitted else {
                refuse(fd, state.withLock { $0.stopping } ? "the daemon is stopping" : "the daemon serves at most \(DaemonServer.maxClients) clients at once")
                continue
            }
            let thread = Thread { [self] in serve(fd, peer) }
            thread.name = "termhost-daemon-client"
            thread.start()
        }
        // Under the lock: a client's thread removes its descriptor before closing it, so every
        // descriptor listed here is still that client's (never one reused by something else).
        state.withLock { s in
            s.stopping = true
            for fd in s.clients.keys { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Asks `run` to return (from any thread; idempotent).
    public func stop() {
        state.withLock { $0.stopping = true }
        listener.shutdown()
    }

    private func refuse(_ fd: Int32, _ why: String) {
        let connection = DaemonConnection(fd: fd)
        _ = connection.send(DaemonFrame(type: DaemonMessage.refused.rawValue, payload: DaemonProtocol.payload(["error": why])))
        close(fd)
    }

    private func serve(_ fd: Int32, _ peer: PeerCredentials) {
        var connection = DaemonConnection(fd: fd)
        var name = "client pid \(peer.pid)"
        defer {
            connection.closeDescriptors()   // passed with a frame that ended the connection
            state.withLock { _ = $0.clients.removeValue(forKey: fd) }
            close(fd)
        }
        connection.setTimeout(SO_RCVTIMEO, seconds: DaemonConnection.helloTimeout)
        guard case .frame(let first) = receive(&connection, name) else { return }
        guard first.type == DaemonMessage.hello.rawValue else {
            log("\(name): the first frame is of type \(first.type), not a hello: closed")
            _ = connection.send(refusal("the first frame must be a hello (type \(DaemonMessage.hello.rawValue))"))
            return
        }
        let hello: DaemonProtocol.Hello
        switch DaemonProtocol.hello(first.payload) {
        case .failure(let e):
            log("\(name): \(e): closed")
            _ = connection.send(refusal(e.description))
            return
        case .success(let h): hello = h
        }
        guard hello.version == DaemonProtocol.version else {
            let why = "this daemon speaks protocol \(DaemonProtocol.version) and the client \(hello.version): run the same Termhost on both sides ('termhost daemon stop' ends this one)"
            log("\(name): \(why)")
            _ = connection.send(refusal(why))
            return
        }
        name = "client pid \(peer.pid) (\(VisibleText.of(hello.client)))"
        state.withLock { $0.clients[fd] = name }
        connection.setTimeout(SO_RCVTIMEO, seconds: 0)
        guard send(connection, .welcome, ["protocol": DaemonProtocol.version, "daemon": version, "pid": Int(getpid())], name) else { return }

        while case .frame(let frame) = receive(&connection, name) {
            // Only run and attach requests take passed descriptors; with any other frame they are closed.
            if frame.type != DaemonMessage.request.rawValue || !["run", "attach"].contains((try? DaemonProtocol.operation(frame.payload).get()) ?? "") {
                connection.closeDescriptors()
            }
            guard frame.type == DaemonMessage.request.rawValue else {
                // A type this daemon does not know (a newer client's): skipped, as the framing allows.
                log("\(name): skipped a frame of type \(frame.type), which protocol \(DaemonProtocol.version) does not have")
                continue
            }
            let reply: [String: Any]
            var stopping = false
            switch DaemonProtocol.request(frame.payload) {
            case .failure(let e): reply = ["error": e.description]
            case .success(("status", _)): reply = status()
            case .success(("stop", _)):
                reply = ["stopping": true]
                stopping = true
            case .success(("run", let fields)):
                guard let refused = runCommand(fields, &connection, name) else { return }
                reply = refused
            case .success(("attach", let fields)):
                // On success the connection now belongs to the attachment, until it ends.
                guard let refused = attach(fields, &connection, name) else { return }
                reply = refused
            case .success(let (op, fields)) where DaemonServer.sessionOperations.contains(op):
                reply = sessionRequest(op, fields, name)
            case .success(let (op, _)):
                reply = ["error": "unknown operation '\(VisibleText.of(op))' (this daemon knows: \(DaemonServer.operations.joined(separator: ", ")))"]
            }
            guard send(connection, .reply, reply, name) else { return }
            if stopping {
                log("\(name) asked the daemon to stop")
                stop()
            }
        }
    }

    func receive(_ connection: inout DaemonConnection, _ name: String) -> DaemonConnection.Received {
        let got = connection.receive()
        switch got {
        case .frame: break
        case .closed(let truncated): if truncated { log("\(name): the connection ended inside a frame (truncated)") }
        case .malformed(let why): log("\(name): malformed: \(why): closed")
        case .failed(let why): log("\(name): \(why): closed")
        }
        return got
    }

    func send(_ connection: DaemonConnection, _ type: DaemonMessage, _ object: [String: Any], _ name: String) -> Bool {
        guard connection.send(DaemonFrame(type: type.rawValue, payload: DaemonProtocol.payload(object))) else {
            log("\(name) did not read what the daemon sent within \(DaemonConnection.writeTimeout) s: detached")
            return false
        }
        return true
    }

    private func refusal(_ why: String) -> DaemonFrame {
        DaemonFrame(type: DaemonMessage.refused.rawValue, payload: DaemonProtocol.payload(["error": why]))
    }

    private func status() -> [String: Any] {
        let (clients, served) = state.withLock { ($0.clients.values.sorted(), $0.served) }
        var out: [String: Any] = ["pid": Int(getpid()), "protocol": DaemonProtocol.version, "daemon": version,
                                  "socket": listener.address.socket, "uptime_seconds": Int(Date().timeIntervalSince(started)),
                                  "clients": clients, "clients_served": served]
        for (k, v) in extraStatus() { out[k] = v }
        return out
    }
}
