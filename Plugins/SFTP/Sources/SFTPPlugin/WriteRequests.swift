import CLibSSH2
import LibSSH2
import Glibc

/// How many bytes each SFTP write request of an upload carries. libssh2 sends 30,000; OpenSSH's
/// sftp asks the server (limits@openssh.com) and sends what it allows, 255 KiB to OpenSSH's
/// sftp-server. The request count is what costs on the server: sftp-server reads, seeks, writes
/// and answers once per request, and with 30,000-byte requests it and sshd spent more CPU on an
/// upload than the client did (Docs/SFTP.md, "Speed").
///
/// Termhost's libssh2 build carries a patch (Scripts/libssh2-patches/sftp-write-size.patch)
/// that adds `libssh2_sftp_termhost_write_size`. It is looked up at run time, like
/// UserauthBanner's function: a libssh2 without the patch (the system's 1.10, or a system 1.11
/// used as it is) keeps its 30,000-byte requests and still works.
/// Runs on the session's executor, like RemoteFS.
enum WriteRequests {
    /// libssh2's own size (MAX_SFTP_OUTGOING_SIZE).
    static let standard = 30_000
    /// The most asked for: OpenSSH's sftp-server takes no message over 256 KiB
    /// (SFTP_MAX_MSG_LENGTH), and the patched function takes no more either.
    static let ceiling = 256 * 1024
    /// Below this the server is not asked: asking costs a channel and a round trip, more than
    /// fewer requests save on a few MiB. Once asked, the size stays for the connection's later
    /// files, small ones too (it is the SFTP session's setting).
    static let worthAsking: UInt64 = 4 << 20

    /// Sets the session's request size for an upload of `bytes` from what the server allows,
    /// logs the size chosen (debug), and returns the size the session writes. Keeps the
    /// standard size when the server does not say (or cannot be asked) or this libssh2 cannot
    /// send more; a failure to ask is logged, not passed on (a lost connection shows on the
    /// upload's next write).
    static func prepare(_ fs: RemoteFS, _ extensions: OpenSSHExtensions, bytes: UInt64, path: String) -> Int {
        guard bytes >= worthAsking, extensions.writeRequestSize == standard else { return extensions.writeRequestSize }
        guard let function else {
            fs.debug("\(path.shown): writing \(standard)-byte requests (this libssh2 cannot send larger ones)")
            return standard
        }
        var limits: SFTPWire.Limits?
        do throws(SFTPError) { limits = try extensions.limits(fs) } catch {
            fs.debug("\(path.shown): writing \(standard)-byte requests (cannot ask the server's limits: \(error.message))")
            return standard
        }
        guard let limits, let size = SFTPWire.writeRequestSize(limits, standard: standard, ceiling: ceiling) else {
            fs.debug("\(path.shown): writing \(standard)-byte requests (the server does not offer larger ones)")
            return standard
        }
        guard function(fs.sftp, size) == 0 else {
            fs.debug("\(path.shown): writing \(standard)-byte requests (libssh2 refused \(size))")
            return standard
        }
        extensions.writeRequestSize = size
        fs.debug("\(path.shown): writing \(size)-byte requests (the server's limits: write \(limits.write), packet \(limits.packet))")
        return size
    }

    /// Whether this libssh2 carries Termhost's SFTP write patch, which also makes a write that
    /// filled the socket mid-request return at once without reading (what UploadLanes' several
    /// channels rely on: nothing may be read while a packet is half sent).
    static var patched: Bool { function != nil }

    /// `int libssh2_sftp_termhost_write_size(LIBSSH2_SFTP *, size_t)` (Termhost's patch).
    private typealias Function = @convention(c) (OpaquePointer?, Int) -> Int32

    /// Found once (LibSSH2.optionalFunction); nil for a libssh2 without the patch.
    private static let function = LibSSH2.optionalFunction("libssh2_sftp_termhost_write_size", as: Function.self)
}
