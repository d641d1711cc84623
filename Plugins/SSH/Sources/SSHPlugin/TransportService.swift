import CLibSSH2
import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// The service other plugins use instead of reimplementing SSH
/// (SDK/include/termhost/ssh/transport.h, "org.termhost.ssh.transport/1").
///
/// Each connection owns a serial DispatchQueue: its executor. Every libssh2 call for the
/// connection runs there, so one session never has two callers.
final class TransportConnection: @unchecked Sendable {
    let connection: SSHConnection
    let executor = DispatchQueue(label: "org.termhost.ssh.session")
    init(_ connection: SSHConnection) { self.connection = connection }
}

/// Handles given to callers are generation tokens, not pointers: each open() gets a number
/// never used before, so a handle kept after close() (or a stray one) finds nothing and gets
/// TERMHOST_ERR_NOT_FOUND instead of touching freed memory or a newer connection.
enum TransportHandles {
    private static let table = Mutex<(next: UInt64, live: [UInt64: TransportConnection])>((0, [:]))

    static func add(_ c: TransportConnection) -> OpaquePointer {
        let id = table.withLock { state -> UInt64 in
            state.next += 1
            state.live[state.next] = c
            return state.next
        }
        return OpaquePointer(bitPattern: UInt(id))!
    }

    static func find(_ handle: OpaquePointer?) -> TransportConnection? {
        guard let handle else { return nil }
        let id = UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle))))
        return table.withLock { $0.live[id] }
    }

    static func remove(_ handle: OpaquePointer?) -> TransportConnection? {
        guard let handle else { return nil }
        let id = UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle))))
        return table.withLock { $0.live.removeValue(forKey: id) }
    }
}

enum TransportService {
    /// The SSH plugin's own host (for the vault and prompts); set when the feature activates.
    nonisolated(unsafe) static var pluginHost: PluginHost?

    static func closed(_ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status {
        fail(err, Int(TERMHOST_ERR_NOT_FOUND), "no such SSH connection: it was closed, or the handle is not one open() returned")
    }

    static func fail(_ err: UnsafeMutablePointer<termhost_error_t>?, _ code: Int, _ message: String) -> termhost_status {
        termhostWriteError(err, Int32(code), message)
        return Int32(code)
    }

    nonisolated(unsafe) static let vtable: UnsafeMutablePointer<termhost_ssh_transport_t> = {
        let t = UnsafeMutablePointer<termhost_ssh_transport_t>.allocate(capacity: 1)
        t.initialize(to: termhost_ssh_transport_t(
            struct_size: UInt32(MemoryLayout<termhost_ssh_transport_t>.size),
            open: { _, scene, destination, out, err in
                guard let destination, let out else { return TransportService.fail(err, Int(TERMHOST_ERR_INVALID_ARGUMENT), "open: NULL argument") }
                guard let host = TransportService.pluginHost, let store = host.store else {
                    return TransportService.fail(err, Int(TERMHOST_ERR_UNSUPPORTED), "the SSH feature is not active")
                }
                let target = String(cString: destination)
                do {
                    guard let resolved = try Vault(store: store).resolve(target) else {
                        return TransportService.fail(err, Int(TERMHOST_ERR_INVALID_ARGUMENT), "'\(target)' is neither a saved host nor user@host[:port]")
                    }
                    let vault = Vault(store: store)
                    let c = try JumpRoute.connect(to: resolved, through: JumpRoute.hops(to: resolved, extra: [], vault: vault),
                                                  interaction: Interaction(host: host, scene: scene))
                    out.pointee = TransportHandles.add(TransportConnection(c))
                    return Int32(TERMHOST_OK)
                } catch let e as SSHError {
                    return TransportService.fail(err, Int(e.kind == .refused ? TERMHOST_ERR_DENIED : TERMHOST_ERR_IO), e.message)
                } catch {
                    return TransportService.fail(err, Int(TERMHOST_ERR_IO), "\(error)")
                }
            },
            close: { raw in
                guard let c = TransportHandles.remove(raw) else { return }
                c.executor.sync { c.connection.teardown() }
            },
            exec: { raw, command, stdinData, stdinSize, onStdout, onStderr, user, status, err in
                guard let command else { return TransportService.fail(err, Int(TERMHOST_ERR_INVALID_ARGUMENT), "exec: NULL command") }
                guard let c = TransportHandles.find(raw) else { return TransportService.closed(err) }
                let input = stdinData.map { Array(UnsafeRawBufferPointer(start: $0, count: stdinSize)) } ?? []
                let text = String(cString: command)
                return c.executor.sync { () -> termhost_status in
                    do {
                        let code = try ExecChannel(connection: c.connection).run(text, input: input) { stream, data in
                            _ = (stream == 0 ? onStdout : onStderr).map { $0(user, data.baseAddress, data.count) }
                        }
                        status?.pointee = code
                        return Int32(TERMHOST_OK)
                    } catch {
                        return TransportService.fail(err, Int(TERMHOST_ERR_IO), "\(error)")
                    }
                }
            },
            with_session: { raw, body, user, err in
                guard let body else { return TransportService.fail(err, Int(TERMHOST_ERR_INVALID_ARGUMENT), "with_session: NULL body") }
                guard let c = TransportHandles.find(raw) else { return TransportService.closed(err) }
                return c.executor.sync {
                    libssh2_session_set_blocking(c.connection.session, 1)
                    return body(user, UnsafeMutableRawPointer(c.connection.session), c.connection.socket, err)
                }
            }))
        return t
    }()
}
