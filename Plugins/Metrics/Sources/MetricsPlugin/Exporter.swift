import Foundation
import Glibc
import MetricsCore
import Synchronization
import TermhostSDK

/// `metrics serve`: a minimal HTTP/1.1 server answering GET /metrics with the Prometheus text
/// format, for an existing Prometheus to scrape. One request per connection.
///
/// Design: the command's thread accepts and keeps the monitor list in step with the store;
/// each connection is served on a thread of its own, so a slow or silent client holds only
/// its own thread, never the scrape beside it. Bounds (Docs/Metrics.md, "Limits"):
/// `ExporterLimits.connections` connections at once, at most `ExporterLimits.perPeer` from one
/// address (more are answered 503 and closed), the
/// request head within `ExporterLimits.requestSeconds` and `HTTPRequestHead.maxHeadBytes`
/// (431), the answer written within the same time again.
struct Exporter {
    let command: MetricsCommand
    let monitors: MonitorStore

    static let usage = "usage: termhost metrics serve [--background] [--listen ADDRESS:PORT] [HOST]... | --stop [--listen ADDRESS:PORT]"
    static let arguments = CommandArguments("termhost metrics serve", usage: usage,
                                            options: [.value("--listen"), .flag("--background"), .flag("--stop")])

    func run(_ args: [String]) throws -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try command.invocation.parse(args, with: Exporter.arguments) } catch { return error.status }
        let background = parsed.has("--background"), stopping = parsed.has("--stop")
        if stopping && (background || !parsed.arguments.isEmpty) { return command.usageError(Exporter.usage) }
        if stopping { return stopInDaemon(parsed.value("--listen")) }
        let listen = parsed.value("--listen") ?? "127.0.0.1:9464"
        let hosts = parsed.arguments
        let address: String, port: UInt16, requestSeconds: Double
        switch Exporter.parse(listen) {
        case .failure(let problem): return command.usageError("termhost metrics serve: \(problem.message)")
        case .success(let p): (address, port, requestSeconds) = p
        }
        if background {
            // Checked above without side effects: a typo never starts a daemon.
            if let status = command.invocation.requireDaemon(command.host, "termhost metrics serve") { return status }
            ServeInDaemon.operations.lock()
            defer { ServeInDaemon.operations.unlock() }
            if let port = ServeInDaemon.port(listen) {
                command.invocation.print("Already serving Prometheus metrics on http://\(address):\(port)/metrics in the daemon")
                return 0
            }
        }
        guard let transport = command.transport() else { return 1 }
        let fd: Int32
        let bound: UInt16
        switch Exporter.listen(address, port) {
        case .failure(let e): command.invocation.printError("termhost metrics serve: cannot listen on \(VisibleText.of(listen)): \(e.message)"); return 1
        case .success(let v): (fd, bound) = v
        }
        if background {
            guard ServeInDaemon.start(listen: listen, fd: fd, bound: bound, hosts: hosts, monitors: monitors, transport: transport,
                                      requestSeconds: requestSeconds, host: command.host) else {
                command.invocation.printError("termhost metrics serve: \(String(cString: strerror(errno)))")
                return 1
            }
            do { try ServeIntents(store: monitors.store).add(listen, hosts: hosts) } catch {
                command.invocation.printError("termhost metrics serve: serving, but the daemon will not serve it again after a restart: \(error.message)")
            }
            command.invocation.print("Serving Prometheus metrics on http://\(address):\(bound)/metrics in the daemon until 'termhost metrics serve --stop --listen \(VisibleText.of(listen))'")
            return 0
        }
        defer { close(fd) }
        let set = MonitorSet(explicit: hosts, monitors: monitors, transport: transport, scene: 0, details: false)
        set.sync(force: true)
        defer { set.release() }
        // Ctrl-C or SIGTERM: the loop wakes through this pipe and the command returns at once,
        // so the host shuts the plugin down instead of abandoning it after its 3 s.
        guard let wake = WakePipe() else {
            command.invocation.printError("termhost metrics serve: \(String(cString: strerror(errno)))")
            return 1
        }
        defer { wake.close() }
        let registration = try? command.host.cancellation?.onCancel(scene: command.invocation.scene) { _ in wake.wake() }
        defer { registration?.remove() }
        command.invocation.print("Serving Prometheus metrics on http://\(address):\(bound)/metrics")
        Exporter.acceptLoop(fd, set: set, requestSeconds: requestSeconds, wake: wake.readEnd, host: command.host)
        return 130
    }

    /// Answers the scrapes that reach `fd` until `wake` is readable, keeping `set` in step with
    /// the saved monitors. [the thread that owns `set`]
    /// `--listen`'s ADDRESS:PORT, and the request bound of the environment (ExporterLimits).
    static func parse(_ listen: String) -> Result<(address: String, port: UInt16, requestSeconds: Double), ListenError> {
        guard let colon = listen.lastIndex(of: ":") else {
            return .failure(ListenError(message: "--listen takes ADDRESS:PORT, e.g. 127.0.0.1:9464, not '\(VisibleText.of(listen))'"))
        }
        do {
            let port = try BoundedNumber.integer(String(listen[listen.index(after: colon)...]), name: "the port of --listen", in: 0...65535)
            let seconds = try ExporterLimits.requestSeconds(ProcessInfo.processInfo.environment)
            return .success((String(listen[..<colon]), UInt16(port), seconds))
        } catch {
            return .failure(ListenError(message: "\(error)"))
        }
    }

    /// Serves `listen` in the daemon again (its start); why not, when it cannot.
    static func serveInDaemon(listen: String, hosts: [String], monitors: MonitorStore, host: PluginHost) -> String? {
        guard let transport = SSHTransport(host: host), transport.offersOpenExec else { return "the SSH plugin's transport service is not available" }
        switch parse(listen) {
        case .failure(let problem): return problem.message
        case .success(let (address, port, seconds)):
            switch Exporter.listen(address, port) {
            case .failure(let e): return "cannot listen on \(VisibleText.of(listen)): \(e.message)"
            case .success(let (fd, bound)):
                return ServeInDaemon.start(listen: listen, fd: fd, bound: bound, hosts: hosts, monitors: monitors, transport: transport,
                                           requestSeconds: seconds, host: host) ? nil : String(cString: strerror(errno))
            }
        }
    }

    /// `--stop`: the daemon stops serving `listen` (every endpoint when nil) and forgets it.
    private func stopInDaemon(_ listen: String?) -> Int32 {
        // Without a daemon nothing serves: the endpoints are only forgotten, and no daemon is
        // started just to stop (which would serve them all first).
        guard command.host.isDaemon else {
            do { try ServeIntents(store: monitors.store).remove(listen) } catch {
                command.invocation.printError("termhost metrics serve --stop: \(error.message)")
                return 1
            }
            command.invocation.print("Forgotten: " + (listen.map { "--listen \(VisibleText.of($0)) is" } ?? "no endpoint is")
                                     + " served when the daemon starts (no daemon ran this command, so none stopped serving)")
            return 0
        }
        ServeInDaemon.operations.lock()
        defer { ServeInDaemon.operations.unlock() }
        let stopped = ServeInDaemon.stop(listen)
        do { try ServeIntents(store: monitors.store).remove(listen) } catch {
            command.invocation.printError("termhost metrics serve --stop: \(error.message)")
            return 1
        }
        if stopped.isEmpty {
            command.invocation.print(listen.map { "The daemon was not serving --listen \(VisibleText.of($0))" } ?? "The daemon was not serving metrics")
        }
        for l in stopped { command.invocation.print("Stopped serving Prometheus metrics on \(VisibleText.of(l)) in the daemon") }
        return 0
    }

    static func acceptLoop(_ fd: Int32, set: MonitorSet, requestSeconds: Double, wake: Int32, host: PluginHost) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let board = ReportBoard(set.samplers)
        let open = Atomic<Int>(0)
        let peers = PeerShares()
        var exhausted = false
        while true {
            var pfds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if poll(&pfds, 2, 1000) > 0 {
                if pfds[1].revents != 0 { return }
                // Every waiting client, each handed to its own thread at once.
                while true {
                    var from = sockaddr_storage()
                    var fromLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let client = withUnsafeMutablePointer(to: &from) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(fd, $0, &fromLength) }
                    }
                    if client < 0 {
                        if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errno) {
                            // The client waits in the backlog; polling again at once would
                            // only spin until a descriptor is free.
                            if !exhausted { host.log(.warning, "metrics serve: cannot accept a connection: \(String(cString: strerror(errno))); pausing 100 ms at a time") }
                            exhausted = true
                            usleep(100_000)
                        }
                        break
                    }
                    exhausted = false
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    // One address gets a share of the connections, not all of them: a peer that
                    // holds connections open (and reopens each one closed) cannot starve a scraper.
                    let peer = PeerShares.address(from)
                    guard peers.take(peer) else {
                        Exporter.refuseBusy(client)
                        continue
                    }
                    guard open.add(1, ordering: .relaxed).newValue <= ExporterLimits.connections else {
                        open.subtract(1, ordering: .relaxed)
                        peers.give(peer)
                        Exporter.refuseBusy(client)
                        continue
                    }
                    let thread = Thread {
                        Exporter.serve(client, board: board, seconds: requestSeconds)
                        open.subtract(1, ordering: .relaxed)
                        peers.give(peer)
                    }
                    thread.name = "metrics serve connection"
                    thread.stackSize = 256 * 1024
                    thread.start()
                }
            }
            set.sync()
            board.update(set.samplers)
        }
    }

    struct ListenError: Error { let message: String }

    static func listen(_ address: String, _ port: UInt16) -> Result<(Int32, UInt16), ListenError> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(ListenError(message: String(cString: strerror(errno)))) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address == "localhost" ? "127.0.0.1" : address, &addr.sin_addr) == 1 else {
            close(fd)
            return .failure(ListenError(message: "'\(VisibleText.of(address))' is not an IPv4 address"))
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && Glibc.listen(fd, 128) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { let e = String(cString: strerror(errno)); close(fd); return .failure(ListenError(message: e)) }
        return .success((fd, UInt16(bigEndian: addr.sin_port)))
    }

    /// Waits until fd is ready for events or the deadline passes.
    private static func ready(_ fd: Int32, _ events: Int32, by deadline: Date) -> Bool {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var pfd = pollfd(fd: fd, events: Int16(events), revents: 0)
            let r = poll(&pfd, 1, Int32(min(1000, max(1, (left * 1000).rounded(.up)))))
            if r > 0 { return true }
            if r < 0 && errno != EINTR { return false }
        }
    }

    /// Over the connection cap: a short answer the send buffer takes at once, then close.
    private static func refuseBusy(_ client: Int32) {
        let text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n"
        _ = send(client, text, text.utf8.count, Int32(MSG_NOSIGNAL))
        close(client)
    }

    /// Reads the request head (HTTPRequestHead's bounds) within `seconds`, answers within
    /// `seconds` more, closes. A client silent or trickling past its deadline is closed
    /// without an answer. [its own thread]
    static func serve(_ client: Int32, board: ReportBoard, seconds: Double) {
        defer { close(client) }
        let deadline = Date().addingTimeInterval(seconds)
        var head: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        var outcome = HTTPRequestHead.Outcome.incomplete
        while outcome == .incomplete, ready(client, Int32(POLLIN), by: deadline) {
            let n = recv(client, &buf, buf.count, 0)
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if n <= 0 { return }
            head += buf[0..<n]
            outcome = HTTPRequestHead.parse(head)
        }
        let (status, body, type): (String, String, String)
        var headOnly = false
        switch outcome {
        case .incomplete: return   // out of time before the request arrived: nothing to answer
        case .refused(let code, let reason, let text): (status, body, type) = ("\(code) \(reason)", text, "text/plain")
        case .request(let method, let target):
            headOnly = method == .head
            if HTTPRequestHead.isMetrics(target) {
                (status, body, type) = ("200 OK", Prometheus.render(board.reports, now: Date().timeIntervalSince1970), Prometheus.contentType)
            } else {
                (status, body, type) = ("404 Not Found", "try /metrics\n", "text/plain")
            }
        }
        let bytes = Array(body.utf8)
        let response = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        var out = Array(response.utf8)
        if !headOnly { out += bytes }
        let writeDeadline = Date().addingTimeInterval(seconds)
        var sent = 0
        while sent < out.count, ready(client, Int32(POLLOUT), by: writeDeadline) {
            let n = out[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if n <= 0 { break }
            sent += n
        }
    }
}

/// The samplers a scrape reads, as the command's thread last synced them. Samplers are
/// thread-safe; only the list needs the lock.
final class ReportBoard: Sendable {
    private let samplers: Mutex<[Sampler]>
    init(_ list: [Sampler]) { samplers = Mutex(list) }
    func update(_ list: [Sampler]) { samplers.withLock { $0 = list } }
    var reports: [HostReport] { samplers.withLock { $0 }.map(\.report) }
}

/// The endpoint's bounds, and the variable tests use to shorten the request deadline.
enum ExporterLimits {
    /// Connections served at once. A Prometheus server scrapes with one; 64 leaves room for
    /// several and for curl, while a flood costs at most 64 threads.
    static let connections = 64
    /// Connections one peer address may hold at once: half, so other addresses always find
    /// room whatever one peer does (a scraper beside a flood from elsewhere is answered).
    static let perPeer = 32
    /// A request head must arrive within this (slowloris defence), and the answer leave within
    /// as long again. Prometheus sends its request at once.
    static let defaultRequestSeconds = 5.0
    static let variable = "TERMHOST_METRICS_REQUEST_TIMEOUT"

    static func requestSeconds(_ env: [String: String]) throws(NumberOutOfRange) -> Double {
        guard let text = env[variable] else { return defaultRequestSeconds }
        return try BoundedNumber.decimal(text, name: variable, in: 0.1...300, unit: "seconds")
    }
}

/// Open connections by peer address (`metrics serve`), each address held to `ExporterLimits.perPeer`.
final class PeerShares: Sendable {
    private let open = Mutex<[String: Int]>([:])

    /// Counts one more connection from `peer`; false when it already holds its share.
    func take(_ peer: String) -> Bool {
        open.withLock { counts in
            guard counts[peer, default: 0] < ExporterLimits.perPeer else { return false }
            counts[peer, default: 0] += 1
            return true
        }
    }

    func give(_ peer: String) {
        open.withLock { counts in
            let left = counts[peer, default: 1] - 1
            counts[peer] = left > 0 ? left : nil
        }
    }

    /// The peer's address, without its port (IPv4 or IPv6 text).
    static func address(_ from: sockaddr_storage) -> String {
        var copy = from
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(from.ss_family) {
        case AF_INET:
            withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                var a = p.pointee.sin_addr
                _ = inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
            } }
        case AF_INET6:
            withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                var a = p.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &a, &text, socklen_t(text.count))
            } }
        default: return "?"
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
