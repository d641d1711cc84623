import CTermhost
import TermhostSDK

/// The C entry points of "org.termhost.ssh.sessions/1" (SDK/include/termhost/ssh/sessions.h).
/// Each checks its arguments where they enter, finds its instance through `self->context`
/// (SessionsProvider) and turns a PluginError into the code and message the header promises.
enum SessionsService {
    typealias Table = UnsafePointer<termhost_ssh_sessions_t>
    typealias ErrorOut = UnsafeMutablePointer<termhost_error_t>

    /// A fresh copy for each providing instance (its context is filled in by SessionsProvider).
    static var template: termhost_ssh_sessions_t { termhost_ssh_sessions_t(
        struct_size: UInt32(MemoryLayout<termhost_ssh_sessions_t>.size),
        context: nil,
        open: { table, request, sink, user, err in
            guard let request, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open: NULL request or sink") }
            return SessionsService.call(table, err) { provider throws(PluginError) in
                let json = try provider.open(SessionRequest(json: String(cString: request)))
                SessionsService.deliver(json, sink, user)
            }
        },
        list: { table, sink, user, err in
            guard let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list: NULL sink") }
            return SessionsService.call(table, err) { provider in SessionsService.deliver(provider.list(), sink, user) }
        },
        attach: { table, session, sink, attachment, err in
            guard let session, let sink, let attachment else {
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "attach: NULL session, sink or attachment")
            }
            guard TermhostStruct.has(sink, \.closed), let output = sink.pointee.output, let event = sink.pointee.event,
                  let closed = sink.pointee.closed else {
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "attach: the sink needs output, event and closed")
            }
            let copied = PersistentSession.Sink(output: output, event: event, closed: closed, user: UInt(bitPattern: sink.pointee.user))
            return SessionsService.call(table, err) { provider throws(PluginError) in
                attachment.pointee = try provider.attach(String(cString: session), copied)
            }
        },
        detach: { table, attachment, err in
            SessionsService.call(table, err) { provider throws(PluginError) in try provider.detach(attachment) }
        },
        write: { table, session, data, size, err in
            guard let session, data != nil || size == 0 else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "write: NULL session or data") }
            return SessionsService.call(table, err) { provider throws(PluginError) in
                let target = try provider.session(String(cString: session))
                do throws(PersistentSession.WriteRefusal) { try target.write(UnsafeRawBufferPointer(start: data, count: size)) } catch {
                    switch error {
                    case .ended: throw PluginError("the persistent session '\(target.id)' has ended", code: Int32(TERMHOST_ERR_NOT_FOUND))
                    case .busy: throw PluginError("the persistent session '\(target.id)' has 1 MiB of input not sent yet: try again",
                                                  code: Int32(TERMHOST_ERR_BUSY))
                    }
                }
            }
        },
        resize: { table, session, columns, rows, err in
            guard let session else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "resize: NULL session") }
            let range = SessionRequest.sizeRange
            guard range.contains(Int(columns)), range.contains(Int(rows)) else {
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "resize: \(columns)x\(rows) is outside 1..\(range.upperBound)")
            }
            return SessionsService.call(table, err) { provider throws(PluginError) in
                try provider.session(String(cString: session)).resize(columns: Int(columns), rows: Int(rows))
            }
        },
        events: { table, session, since, sink, user, err in
            guard let session, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "events: NULL session or sink") }
            guard since.isFinite else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "events: since is not a number") }
            return SessionsService.call(table, err) { provider throws(PluginError) in
                SessionsService.deliver(try provider.session(String(cString: session)).events(since: since), sink, user)
            }
        },
        kill: { table, session, err in
            guard let session else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "kill: NULL session") }
            return SessionsService.call(table, err) { provider throws(PluginError) in try provider.kill(String(cString: session)) }
        }) }

    /// Runs body with the table's instance; a PluginError becomes its code and message.
    private static func call(_ table: Table?, _ err: ErrorOut?, _ body: (SessionsProvider) throws(PluginError) -> Void) -> termhost_status {
        guard let provider = SessionsProvider.of(table) else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "not a table of org.termhost.ssh.sessions/1 this plugin handed out")
        }
        do { try body(provider) } catch { return termhostFail(err, Int(error.code), error.message) }
        return termhost_status(TERMHOST_OK)
    }

    private static func deliver(_ text: String, _ sink: termhost_value_sink, _ user: UnsafeMutableRawPointer?) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { sink(user, $0.baseAddress, $0.count) }
    }
}
