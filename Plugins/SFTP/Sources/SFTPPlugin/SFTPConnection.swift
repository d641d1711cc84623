import CLibSSH2
import CTermhost
import TermhostSDK

/// One SSH connection from the transport service with an SFTP session on it. Every request
/// runs inside `run`, on the connection's executor (libssh2 allows one caller per session).
final class SFTPConnection: @unchecked Sendable {
    let destination: String
    private let host: PluginHost
    private let connection: SSHTransport.Connection
    private var sftp: OpaquePointer?
    private let extensions = OpenSSHExtensions()
    private let channels = ExtraChannels()
    private var closed = false

    /// Connects through the SSH plugin (trust and authentication happen there, prompting on
    /// scene when it has a terminal) and starts SFTP. `shared`: in the daemon, a live
    /// connection to the host may carry it (transport.h, TERMHOST_SSH_OPEN_SHARED); only for
    /// work of a few requests, since every request holds the connection's other channels.
    init(transport: SSHTransport, destination: String, scene: UInt64, shared: Bool = false) throws(SFTPError) {
        self.destination = destination
        host = transport.pluginHost
        do {
            connection = try transport.open(destination, scene: scene, shared: shared)
        } catch {
            let kind: SFTPError.Kind = switch Int(error.code) {
            case TERMHOST_ERR_DENIED: .denied
            case TERMHOST_ERR_INVALID_ARGUMENT: .failed     // not a saved host nor user@host[:port]
            default: .connectionLost
            }
            throw SFTPError(kind, error.message)
        }
    }

    /// For a tool: the saved host `name` only, and never a prompt (the transport's open_saved);
    /// the error keeps the transport's code and its advice on what to run.
    init(transport: SSHTransport, savedHost name: String, shared: Bool = false) throws(PluginError) {
        destination = name
        host = transport.pluginHost
        connection = try transport.openSaved(name, shared: shared)
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        // Channels are freed on the session's executor, before the session itself goes.
        try? connection.withSession { session, socket in
            // A session left with a packet half sent cannot send their closes (each would wait
            // for the session's timeout): they go with the session.
            if libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND == 0 {
                var all = self.extensions.channel.map { [$0] } ?? []
                all += self.channels.opened
                ChannelClosing.close(all, session: session, socket: socket)
                self.extensions.release()
                self.channels.release()
                if let sftp = self.sftp { libssh2_sftp_shutdown(sftp) }
            }
            self.sftp = nil
        }
        connection.close()
    }

    /// Runs body on the executor with the SFTP session, starting SFTP on first use.
    func run<T>(_ body: (RemoteFS, OpenSSHExtensions) throws(SFTPError) -> T) throws(SFTPError) -> T {
        var result: T?
        var failure: SFTPError?
        do throws(PluginError) {
            try connection.withSession { (session, socket) throws(PluginError) in
                do throws(SFTPError) {
                    if self.sftp == nil {
                        guard let s = libssh2_sftp_init(session) else {
                            throw SFTPError(.failed, "sftp: \(self.destination): the server refused the SFTP subsystem")
                        }
                        self.sftp = s
                    }
                    let fs = RemoteFS(session: session, sftp: self.sftp!, socket: socket, host: self.destination, plugin: self.host,
                                           channels: self.channels)
                    result = try body(fs, self.extensions)
                } catch {
                    failure = error
                    throw PluginError(error.message)
                }
            }
        } catch {
            if let failure { throw failure }
            throw SFTPError(.connectionLost, error.message)
        }
        return result!
    }
}
