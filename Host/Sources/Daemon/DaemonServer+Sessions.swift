import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// The daemon's persistent-session operations (Docs/Daemon.md): each is a request answered by
/// one reply, except `attach`, after whose reply the connection streams the session until the
/// client detaches, falls too far behind, or the session ends.
extension DaemonServer {
    static let sessionOperations = ["sessions", "open", "attach", "events", "kill"]
    /// The most output one frame carries: well inside a client's 1 MiB frame limit.
    static let outputFrameBytes = 256 * 1024

    private func unavailable() -> [String: Any] {
        ["error": "this daemon has no persistent sessions: the SSH feature (org.termhost.ssh) is not running in it ('termhost features' says why)"]
    }

    /// `sessions`, `open`, `events` and `kill`.
    func sessionRequest(_ op: String, _ fields: [String: Any], _ name: String) -> [String: Any] {
        guard let sessions else { return unavailable() }
        do {
            switch op {
            case "sessions":
                let list = try sessions.list()
                reconcileScenes(list)
                return ["sessions": try DaemonServer.json(list)]
            case "open":
                guard let request = fields["request"] as? [String: Any] else {
                    return ["error": "open needs \"request\": an object, e.g. {\"host\":\"prod\",\"columns\":120,\"rows\":40}"]
                }
                // The provider checks every field where it enters (ssh/sessions.h).
                let text = String(decoding: DaemonProtocol.payload(request), as: UTF8.self)
                let session = try DaemonServer.json(sessions.open(text))
                log("\(name) opened persistent session \(VisibleText.of((session as? [String: Any])?["id"] as? String ?? "?"))")
                reconcileScenes()
                return ["session": session]
            case "events":
                let id = try DaemonProtocol.sessionID(fields).get()
                let since = try DaemonProtocol.time(fields, "since").get()
                return ["events": try DaemonServer.json(sessions.events(id, since: since))]
            case "kill":
                let id = try DaemonProtocol.sessionID(fields).get()
                try sessions.kill(id)
                log("\(name) killed persistent session \(id)")
                reconcileScenes()
                return ["killed": id]
            default:
                return ["error": "unknown operation '\(VisibleText.of(op))'"]
            }
        } catch let e as DaemonProtocol.ProtocolError {
            return ["error": e.description]
        } catch let e as TerminalSessions.Failure {
            return ["error": e.description]
        } catch {
            return ["error": "\(error)"]
        }
    }

    /// `attach`: returns the reply when the attachment did not start (the connection stays in
    /// request mode), or nil once an attachment ran to its end on this connection.
    func attach(_ fields: [String: Any], _ connection: inout DaemonConnection, _ name: String) -> [String: Any]? {
        guard let sessions else { return unavailable() }
        let id: String
        let size: (columns: Int, rows: Int)?
        do {
            id = try DaemonProtocol.sessionID(fields).get()
            if fields["columns"] != nil || fields["rows"] != nil {
                size = (try DaemonProtocol.integer(fields, "columns", 1...10_000).get(), try DaemonProtocol.integer(fields, "rows", 1...10_000).get())
            } else {
                size = nil
            }
        } catch {
            connection.closeDescriptors()
            return ["error": "\(error)"]
        }
        // A client with a terminal passes it (its input and its output): the daemon reads the
        // keys and writes the output itself, so the client's process is off the keystroke path.
        let passed = connection.takeDescriptors()
        var input: Int32 = -1, terminal: Int32? = nil
        if fields["terminal"] as? Bool == true {
            guard passed.count == 2, isatty(passed[0]) == 1, isatty(passed[1]) == 1 else {
                for d in passed { close(d) }
                return ["error": "attach with \"terminal\" needs the client's terminal input and output passed with the request (SCM_RIGHTS)"]
            }
            // A file description of the daemon's own, non-blocking: the client's stays blocking.
            let out = open("/proc/self/fd/\(passed[1])", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            close(passed[1])
            guard out >= 0 else {
                close(passed[0])
                return ["error": "the daemon could not open the client's terminal: \(String(cString: strerror(errno)))"]
            }
            input = passed[0]
            terminal = out
        } else {
            for d in passed { close(d) }
        }
        defer {
            if input >= 0 { close(input) }
            if let terminal { close(terminal) }
        }
        let attachment = DaemonAttachment(fd: connection.fd, terminal: terminal, log: log)
        // The first output is the replay (a whole ring, up to 64 MiB): cut, like all output,
        // into frames the client's decoder takes, and not counted against the slow-client limit.
        let replayed = Mutex(false)
        let sink = TerminalSessions.Sink(output: { bytes in
            let isReplay = replayed.withLock { done in
                defer { done = true }
                return !done
            }
            var start = 0
            repeat {
                let end = min(bytes.count, start + DaemonServer.outputFrameBytes)
                attachment.push(.output, Array(bytes[start..<end]), counted: !isReplay)
                start = end
            } while start < bytes.count
        },
                                         event: { attachment.push(.event, Array($0.utf8)) },
                                         closed: { attachment.finish($0) })
        let token: UInt64
        do { token = try sessions.attach(id, sink) } catch { return ["error": error.description] }
        // The reply goes before the replay the attach queued; the writer starts only now.
        attachment.push(.reply, DaemonProtocol.payload(["attached": id]), first: true)
        attachment.start()
        reconcileScenes()
        countClient(id, +1)
        if let size { try? sessions.resize(id, columns: size.columns, rows: size.rows) }
        log("\(name) attached to session \(id)")

        // This thread reads what the client sends (and the keys of a passed terminal) until the
        // attachment ends.
        var detachedByClient = false
        var escapes = DetachEscape.filter()
        reading: while true {
            // A frame already read comes first (one read may bring several).
            let pending = connection.buffered()
            if pending == nil, input >= 0 {
                var fds = [pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: input, events: Int16(POLLIN), revents: 0)]
                if poll(&fds, 2, -1) < 0 && errno != EINTR { break }
                if fds[1].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    var keys = [UInt8](repeating: 0, count: 16 * 1024)
                    let n = read(input, &keys, keys.count)
                    if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                    let (send, action) = escapes.filter(Array(keys[0..<n]))
                    if !send.isEmpty {
                        do { try sessions.write(id, send) } catch {
                            attachment.push(.event, DaemonProtocol.payload(["kind": "input-refused", "reason": error.description]))
                        }
                    }
                    if action == .detach { detachedByClient = true; break reading }
                    if action == .help { attachment.push(.output, Array(DetachEscape.help.utf8)) }
                }
                guard fds[0].revents != 0 else { continue }
            }
            let got = pending ?? receive(&connection, name)
            connection.closeDescriptors()   // no frame of an attachment takes any
            guard case .frame(let frame) = got else { break }
            switch DaemonMessage(rawValue: frame.type) {
            case .input?:
                guard frame.payload.count <= DaemonProtocol.maxRequest else {
                    log("\(name): an input frame of \(frame.payload.count) bytes, over \(DaemonProtocol.maxRequest): detached")
                    break reading
                }
                do { try sessions.write(id, frame.payload) } catch {
                    attachment.push(.event, DaemonProtocol.payload(["kind": "input-refused", "reason": error.description]))
                }
            case .resize?:
                guard case .success(let o) = DaemonProtocol.object(frame.payload),
                      case .success(let columns) = DaemonProtocol.integer(o, "columns", 1...10_000),
                      case .success(let rows) = DaemonProtocol.integer(o, "rows", 1...10_000) else {
                    log("\(name): a malformed resize frame: ignored")
                    continue
                }
                try? sessions.resize(id, columns: columns, rows: rows)
            case .detach?:
                detachedByClient = true
                break reading
            default:
                log("\(name): skipped a frame of type \(frame.type) while attached")
            }
        }
        // However the reading ended, the sink goes (a spent token, when the session ended, is
        // ignored); its `closed` hands the writer the reason, and the writer says it last.
        sessions.detach(token)
        attachment.waitWritten()
        countClient(id, -1)
        reconcileScenes()
        log("\(name) \(detachedByClient ? "detached from" : "left") session \(id)\(attachment.overflowed ? " (too slow)" : "")")
        return nil
    }

    /// Tells the scene hooks of sessions opened, restored or ended since they last heard,
    /// from the provider's list (`list`, when the caller has it already).
    func reconcileScenes(_ list: String? = nil) {
        guard let sceneHooks, let sessions else { return }
        guard let text = list ?? (try? sessions.list()),
              let listed = (try? DaemonServer.json(text)) as? [[String: Any]] else { return }
        let live = Set(listed.filter { $0["state"] as? String != "ended" }.compactMap { $0["id"] as? String })
        // The hooks run under the lock, so two connections' views never reach them out of order
        // (an end told before its open would leave a scene behind).
        sessionScenes.withLock { s in
            let opened = live.subtracting(s.known), ended = s.known.subtracting(live)
            s.known = live
            for id in ended { s.clients[id] = nil }
            for id in opened.sorted() { sceneHooks.opened(id) }
            for id in ended.sorted() { sceneHooks.ended(id) }
        }
    }

    private func countClient(_ id: String, _ change: Int) {
        guard let sceneHooks else { return }
        sessionScenes.withLock { s in
            guard s.known.contains(id) else { return }
            let n = max(0, (s.clients[id] ?? 0) + change)
            s.clients[id] = n
            sceneHooks.clients(id, n)
        }
    }

    /// A JSON text from the provider as an object for a reply.
    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }
}
