import CLibSSH2
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
    /// The most the patched function takes (libssh2's largest incoming SFTP packet, 256 KiB).
    static let ceiling = 256 * 1024
    /// Smaller uploads keep the standard size: asking costs a channel and a round trip, more
    /// than fewer requests save on a few MiB.
    static let worthAsking: UInt64 = 4 << 20

    /// Sets the session's request size for an upload of `bytes` from what the server allows,
    /// and logs the size in use (debug). Keeps the standard size when the upload is small, the
    /// server does not say (or cannot be asked), or this libssh2 cannot send more.
    static func prepare(_ fs: RemoteFS, _ extensions: OpenSSHExtensions, bytes: UInt64, path: String) throws(SFTPError) {
        guard bytes >= worthAsking else { return }
        guard let function = lookUp() else {
            fs.debug("\(path.shown): writing \(standard)-byte requests (this libssh2 cannot send larger ones)")
            return
        }
        // The answer is optional: a server that refuses the second channel still takes the upload.
        var limits: SFTPWire.Limits?
        do throws(SFTPError) { limits = try extensions.limits(fs) } catch {
            if error.kind == .connectionLost { throw error }
            fs.debug("\(path.shown): cannot ask the server's limits: \(error.message)")
        }
        guard let limits,
              let size = SFTPWire.writeRequestSize(limits, standard: standard, ceiling: ceiling) else {
            fs.debug("\(path.shown): writing \(standard)-byte requests (the server does not offer larger ones)")
            return
        }
        guard function(fs.sftp, size) == 0 else { return }
        fs.debug("\(path.shown): writing \(size)-byte requests (the server's limits: write \(limits.write), packet \(limits.packet))")
    }

    /// `int libssh2_sftp_termhost_write_size(LIBSSH2_SFTP *, size_t)` (Termhost's patch).
    private typealias Function = @convention(c) (OpaquePointer?, Int) -> Int32

    /// The function in the libssh2 this plugin loaded, found by its soname among the libraries
    /// already loaded (a plugin's libraries are not in the global scope RTLD_DEFAULT searches).
    private static func lookUp() -> Function? {
        guard let library = dlopen("libssh2.so.1", RTLD_LAZY | RTLD_NOLOAD) else { return nil }
        // Loaded already and kept by this plugin's own dependency: closing our reference leaves it mapped.
        defer { dlclose(library) }
        return dlsym(library, "libssh2_sftp_termhost_write_size").map { unsafeBitCast($0, to: Function.self) }
    }
}
