import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// The persistent terminal sessions the daemon serves, as the host sees them: the SSH
/// plugin's service "org.termhost.ssh.sessions/1" (SDK/include/termhost/ssh/sessions.h),
/// reached through the C table like any plugin would. The host knows terminals and scenes,
/// not SSH: whatever feature provides the table owns the sessions.
public final class TerminalSessions: Sendable {
    /// The provider's table, valid while its feature instance lives (the daemon's whole run).
    nonisolated(unsafe) private let table: UnsafePointer<termhost_ssh_sessions_t>

    /// nil when `raw` is not a table of ABI 1.5's size (a provider too old to have one).
    public init?(table raw: UnsafeRawPointer?) {
        guard let raw else { return nil }
        let t = raw.assumingMemoryBound(to: termhost_ssh_sessions_t.self)
        guard TermhostStruct.has(t, \.kill) else { return nil }
        table = t
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public let notFound: Bool
    }

    /// Runs a call that fills a termhost_error_t; a failure becomes `Failure` with its message.
    private func call(_ body: (UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(Failure) {
        var err = termhost_error_t()
        let rc = body(&err)
        guard rc == termhost_status(TERMHOST_OK) else {
            throw Failure(description: termhostErrorMessage(err), notFound: rc == termhost_status(TERMHOST_ERR_NOT_FOUND))
        }
    }

    /// A call whose result is a value sink's bytes (JSON text).
    private func text(_ body: (termhost_value_sink, UnsafeMutableRawPointer, UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(Failure) -> String {
        let box = Unmanaged.passRetained(TextBox())
        defer { box.release() }
        try call { err in
            body({ user, data, size in
                let b = Unmanaged<TextBox>.fromOpaque(user!).takeUnretainedValue()
                b.bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            }, box.toOpaque(), err)
        }
        return String(decoding: box.takeUnretainedValue().bytes, as: UTF8.self)
    }

    private final class TextBox { var bytes: [UInt8] = [] }

    /// Opens a session for the request JSON; returns the session's JSON. Blocks while connecting.
    public func open(_ request: String) throws(Failure) -> String {
        try text { sink, user, err in table.pointee.open(table, request, sink, user, err) }
    }

    public func list() throws(Failure) -> String {
        try text { sink, user, err in table.pointee.list(table, sink, user, err) }
    }

    public func events(_ session: String, since: Double) throws(Failure) -> String {
        try text { sink, user, err in table.pointee.events(table, session, since, sink, user, err) }
    }

    public func write(_ session: String, _ bytes: [UInt8]) throws(Failure) {
        try call { err in bytes.withUnsafeBufferPointer { table.pointee.write(table, session, $0.baseAddress, $0.count, err) } }
    }

    public func resize(_ session: String, columns: Int, rows: Int) throws(Failure) {
        try call { err in table.pointee.resize(table, session, UInt32(columns), UInt32(rows), err) }
    }

    public func kill(_ session: String) throws(Failure) {
        try call { err in table.pointee.kill(table, session, err) }
    }

    /// Attaches `sink`; it is called until its `closed` (exactly once). Returns the token for detach.
    public func attach(_ session: String, _ sink: Sink) throws(Failure) -> UInt64 {
        let retained = Unmanaged.passRetained(sink)
        var c = termhost_ssh_session_sink_t(
            struct_size: UInt32(MemoryLayout<termhost_ssh_session_sink_t>.size), user: retained.toOpaque(),
            output: { user, data, size in
                Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().output(UnsafeRawBufferPointer(start: data, count: size))
            },
            event: { user, json, size in
                let text = json.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: size), as: UTF8.self) } ?? "{}"
                Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().event(text)
            },
            closed: { user, reason in
                let sink = Unmanaged<Sink>.fromOpaque(user!)
                sink.takeUnretainedValue().closed(reason.map { String(cString: $0) } ?? "")
                sink.release()   // the provider never calls this sink again
            })
        var token: UInt64 = 0
        do throws(Failure) { try call { err in table.pointee.attach(table, session, &c, &token, err) } } catch {
            retained.release()
            throw error
        }
        return token
    }

    /// Detaches; the sink's `closed` has run when this returns. A spent token is ignored.
    public func detach(_ token: UInt64) {
        try? call { err in table.pointee.detach(table, token, err) }
    }

    /// Where an attachment's output goes: copies and returns at once (ssh/sessions.h asks it).
    public final class Sink: Sendable {
        let output: @Sendable (UnsafeRawBufferPointer) -> Void
        let event: @Sendable (String) -> Void
        let closed: @Sendable (String) -> Void

        public init(output: @escaping @Sendable (UnsafeRawBufferPointer) -> Void, event: @escaping @Sendable (String) -> Void,
                    closed: @escaping @Sendable (String) -> Void) {
            self.output = output
            self.event = event
            self.closed = closed
        }
    }
}
