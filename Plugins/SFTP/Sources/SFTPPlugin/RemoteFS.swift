import CLibSSH2
import LibSSH2
import Foundation
import Glibc
import SSHCrypto
import TermhostSDK

/// SFTP requests on one session, through libssh2 (blocking mode). Valid only inside a
/// `with_session` body of the connection that owns it: that is the session's executor.
struct RemoteFS {
    let session: OpaquePointer
    let sftp: OpaquePointer
    /// The session's socket, to wait on when libssh2 accepts nothing (WriteStall).
    let socket: Int32
    let host: String
    /// For the debug log.
    let plugin: PluginHost
    /// The connection's further SFTP channels (UploadLanes).
    var channels: ExtraChannels? = nil

    /// A debug log line about this host: "sftp: HOST: message".
    func debug(_ message: String) { plugin.log(.debug, "sftp: \(host): \(message)") }

    /// The failure of the last libssh2 call: the server's SFTP status when it answered, or a
    /// lost connection when it did not.
    func error(_ path: String, _ what: String = "") -> SFTPError {
        let prefix = "sftp: \(what.isEmpty ? "" : what + " ")\(host):\(path.shown)"
        let code = libssh2_session_last_errno(session)
        if code == LIBSSH2_ERROR_SFTP_PROTOCOL {
            let status = libssh2_sftp_last_error(sftp)
            return SFTPError(.remote, "\(prefix): \(SFTPError.reason(status))", status: status)
        }
        return SFTPError(.connectionLost, "\(prefix): connection to \(host) lost: \(lastErrorReason)")
    }

    /// The server's refusal of one request sent on a pipe (SFTPPipe), worded as `error` words
    /// libssh2's: "sftp: WHAT HOST:PATH: REASON".
    func refusal(_ reply: SFTPReply, _ what: String, _ path: String) -> SFTPError {
        let prefix = "sftp: \(what) \(host):\(path.shown)"
        if case .status(_, let code) = reply { return SFTPError(.remote, "\(prefix): \(SFTPError.reason(UInt(code)))", status: UInt(code)) }
        return SFTPError(.failed, "\(prefix): unexpected reply")
    }

    /// libssh2's text for its last error, never empty and escaped (LibSSH2.lastError): a call
    /// that failed without saying why (libssh2 1.10 leaves no message behind a 0 it returned)
    /// is named by its error code.
    var lastErrorReason: String { LibSSH2.lastError(session) }

    /// Whether libssh2's last call stopped with a packet half sent (the socket full). Until the
    /// same call finishes it, any other call that sends gets EAGAIN (libssh2's transport.c), and
    /// nothing may be read: a key exchange the server starts could not send its own packet.
    var packetHalfSent: Bool { libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 }

    /// Waits until the session's socket has bytes to read (or room to write, when libssh2
    /// stopped on a full socket), or `milliseconds` pass. What unblocks a write that the
    /// server's channel window holds back is a window adjust or an acknowledgement from the
    /// server, both inbound.
    func waitForSocket(milliseconds: Int32) {
        // Room to write when libssh2 last stopped on a full socket (a packet half sent): then
        // nothing is read until it is out, so bytes waiting to be read must not wake the wait
        // (it would spin). Otherwise what opens the channel window is a message from the server.
        var p = pollfd(fd: socket, events: Int16(packetHalfSent ? POLLOUT : POLLIN), revents: 0)
        _ = poll(&p, 1, milliseconds)
    }

    func stat(_ path: String, follow: Bool = true) throws(SFTPError) -> RemoteEntry {
        var attrs = LIBSSH2_SFTP_ATTRIBUTES()
        let rc = libssh2_sftp_stat_ex(sftp, path, UInt32(path.utf8.count), follow ? LIBSSH2_SFTP_STAT : LIBSSH2_SFTP_LSTAT, &attrs)
        guard rc == 0 else { throw error(path) }
        return RemoteEntry(name: path.lastComponent, attributes: attrs)
    }

    /// nil when the path does not exist; other failures throw.
    func statIfExists(_ path: String, follow: Bool = true) throws(SFTPError) -> RemoteEntry? {
        do { return try stat(path, follow: follow) } catch {
            if error.kind == .remote, error.status == LIBSSH2_FX_NO_SUCH_FILE || error.status == LIBSSH2_FX_NO_SUCH_PATH { return nil }
            throw error
        }
    }

    /// The entries of a directory, without "." and "..", attributes as the server reads them
    /// (lstat: symlinks are reported as symlinks). A listing of more than RemoteLimits.entries
    /// (a server that never says end of file) fails, naming the directory and the limit, before
    /// it takes all memory.
    func list(_ path: String) throws(SFTPError) -> [RemoteEntry] {
        let entries = try list(path, upTo: RemoteLimits.entries)
        guard entries.count <= RemoteLimits.entries else {
            throw SFTPError(.failed, "sftp: \(host):\(path.shown): the server listed more than \(RemoteLimits.entries) entries (the limit of one listing); nothing more was read")
        }
        return entries
    }

    /// At most `limit` + 1 entries of a directory, sorted: more than `limit` tells the caller
    /// the listing went past it (the rest is not read).
    func list(_ path: String, upTo limit: Int) throws(SFTPError) -> [RemoteEntry] {
        guard let handle = libssh2_sftp_open_ex(sftp, path, UInt32(path.utf8.count), 0, 0, LIBSSH2_SFTP_OPENDIR) else {
            throw error(path, "cannot list")
        }
        defer { libssh2_sftp_close_handle(handle) }
        // A buffer far above any name: libssh2 1.10 skips an entry whose name does not fit.
        var name = [CChar](repeating: 0, count: 65536)
        var entries: [RemoteEntry] = []
        while true {
            var attrs = LIBSSH2_SFTP_ATTRIBUTES()
            // libssh2 returns 0 both at the end of the listing and for an entry with an empty
            // name; only for an entry does it overwrite the attributes (32-bit flags on the wire,
            // so never this value). An empty name must not end the listing: it is refused, and
            // the names after it still count.
            attrs.flags = UInt.max
            let n = libssh2_sftp_readdir_ex(handle, &name, name.count, nil, 0, &attrs)
            if n == 0 && attrs.flags == UInt.max { break }
            if n == LIBSSH2_ERROR_BUFFER_TOO_SMALL {
                // A name longer than the buffer is no name a file system holds: the server's
                // fault, not a lost connection (which would pause transfers to retry it).
                throw SFTPError(.failed, "sftp: \(host):\(path.shown): the server listed a name longer than \(name.count - 1) bytes; nothing more was read")
            }
            guard n >= 0 else { throw error(path, "cannot list") }
            let bytes = name[0..<min(Int(n), name.count)].map { UInt8(bitPattern: $0) }
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "." || text == ".." { continue }
            var entry = RemoteEntry(name: text, attributes: attrs)
            // The name shown is not the name on the server when its bytes are not UTF-8.
            entry.validUTF8 = String(validating: bytes, as: UTF8.self) != nil
            entries.append(entry)
            if entries.count > limit { break }
        }
        return entries.sorted { $0.name < $1.name }
    }

    func mkdir(_ path: String, mode: UInt32 = 0o755) throws(SFTPError) {
        guard libssh2_sftp_mkdir_ex(sftp, path, UInt32(path.utf8.count), Int(mode)) == 0 else { throw error(path, "cannot create directory") }
    }

    func rmdir(_ path: String) throws(SFTPError) {
        guard libssh2_sftp_rmdir_ex(sftp, path, UInt32(path.utf8.count)) == 0 else { throw error(path, "cannot remove directory") }
    }

    func remove(_ path: String) throws(SFTPError) {
        guard libssh2_sftp_unlink_ex(sftp, path, UInt32(path.utf8.count)) == 0 else { throw error(path, "cannot remove") }
    }

    /// SFTP v3 rename: refused by the server when the target exists.
    func rename(_ from: String, _ to: String) throws(SFTPError) {
        let flags = Int(LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE)
        guard libssh2_sftp_rename_ex(sftp, from, UInt32(from.utf8.count), to, UInt32(to.utf8.count), flags) == 0 else {
            var e = error(from, "cannot rename")
            e.message = e.message.replacingOccurrences(of: "\(host):\(from.shown): ", with: "\(host):\(from.shown) to \(to.shown): ")
            throw e
        }
    }

    func chmod(_ path: String, mode: UInt32) throws(SFTPError) {
        var attrs = LIBSSH2_SFTP_ATTRIBUTES()
        attrs.flags = UInt(LIBSSH2_SFTP_ATTR_PERMISSIONS)
        attrs.permissions = UInt(mode & 0o7777)
        guard libssh2_sftp_stat_ex(sftp, path, UInt32(path.utf8.count), LIBSSH2_SFTP_SETSTAT, &attrs) == 0 else {
            throw error(path, "cannot change mode of")
        }
    }

    /// The server's absolute form of path ("." is the login directory).
    func realpath(_ path: String) throws(SFTPError) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = libssh2_sftp_symlink_ex(sftp, path, UInt32(path.utf8.count), &buf, UInt32(buf.count), LIBSSH2_SFTP_REALPATH)
        guard n >= 0 else { throw error(path, "cannot resolve") }
        return String(decoding: buf[0..<min(Int(n), buf.count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The absolute form of a path whose last component may not exist yet.
    func canonical(_ path: String) throws(SFTPError) -> String {
        try realpath(path.parentPath).appendingPath(path.lastComponent)
    }

    func readlink(_ path: String) throws(SFTPError) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = libssh2_sftp_symlink_ex(sftp, path, UInt32(path.utf8.count), &buf, UInt32(buf.count), LIBSSH2_SFTP_READLINK)
        guard n >= 0 else { throw error(path, "cannot read link") }
        return String(decoding: buf[0..<min(Int(n), buf.count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// statvfs@openssh.com: (total, free for the user) in bytes.
    func diskSpace(_ path: String) throws(SFTPError) -> (total: UInt64, available: UInt64, fragment: UInt64) {
        var st = LIBSSH2_SFTP_STATVFS()
        guard libssh2_sftp_statvfs(sftp, path, path.utf8.count, &st) == 0 else { throw error(path, "cannot read disk space of") }
        // The server's numbers: a product past 2^64 is shown as the largest, never a trap.
        return (Pacing.saturatingMultiply(st.f_blocks, st.f_frsize), Pacing.saturatingMultiply(st.f_bavail, st.f_frsize), st.f_frsize)
    }

    func open(_ path: String, flags: Int32, mode: UInt32 = 0o600, what: String) throws(SFTPError) -> OpaquePointer {
        guard let handle = libssh2_sftp_open_ex(sftp, path, UInt32(path.utf8.count), UInt(flags), Int(mode), LIBSSH2_SFTP_OPENFILE) else {
            throw error(path, what)
        }
        return handle
    }

    func fstat(_ handle: OpaquePointer, path: String) throws(SFTPError) -> RemoteEntry {
        var attrs = LIBSSH2_SFTP_ATTRIBUTES()
        guard libssh2_sftp_fstat_ex(handle, &attrs, 0) == 0 else { throw error(path) }
        return RemoteEntry(name: path.lastComponent, attributes: attrs)
    }

    /// Sets mode and times on an open handle (what `sftp -p` preserves).
    func fsetstat(_ handle: OpaquePointer, path: String, mode: UInt32?, mtime: UInt64?) throws(SFTPError) {
        var attrs = LIBSSH2_SFTP_ATTRIBUTES()
        if let mode { attrs.flags |= UInt(LIBSSH2_SFTP_ATTR_PERMISSIONS); attrs.permissions = UInt(mode & 0o7777) }
        if let mtime { attrs.flags |= UInt(LIBSSH2_SFTP_ATTR_ACMODTIME); attrs.mtime = UInt(mtime); attrs.atime = UInt(mtime) }
        guard attrs.flags != 0 else { return }
        guard libssh2_sftp_fstat_ex(handle, &attrs, 1) == 0 else { throw error(path, "cannot set attributes of") }
    }

    /// Sets the size of a file through its path (truncating an upload's unacknowledged tail).
    func truncate(_ path: String, to size: UInt64) throws(SFTPError) {
        var attrs = LIBSSH2_SFTP_ATTRIBUTES()
        attrs.flags = UInt(LIBSSH2_SFTP_ATTR_SIZE)
        attrs.filesize = size
        guard libssh2_sftp_stat_ex(sftp, path, UInt32(path.utf8.count), LIBSSH2_SFTP_SETSTAT, &attrs) == 0 else {
            throw error(path, "cannot truncate")
        }
    }
}

/// Path helpers for remote (always "/") and local paths.
extension String {
    /// For a terminal or a log line: control characters from a server or a file name shown as
    /// octal escapes (VisibleText), so a name cannot move the cursor or fake a line.
    var shown: String { VisibleText.of(self) }

    // These work on bytes, not Characters: a name may begin with a combining mark, which
    // Swift joins with the "/" before it into one Character, so a Character search would not
    // find that "/" (a path "dir/\u{301}x" would be one component, "/" and all).

    var lastComponent: String {
        var bytes = utf8[...]
        if bytes.count > 1, bytes.last == 0x2f { bytes = bytes.dropLast() }
        guard let slash = bytes.lastIndex(of: 0x2f) else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes[bytes.index(after: slash)...], as: UTF8.self)
    }

    var parentPath: String {
        guard let slash = utf8.lastIndex(of: 0x2f) else { return "." }
        return slash == utf8.startIndex ? "/" : String(decoding: utf8[..<slash], as: UTF8.self)
    }

    func appendingPath(_ name: String) -> String {
        isEmpty || self == "." ? name : utf8.last == 0x2f ? self + name : self + "/" + name
    }

    /// The components of a path, split at every "/" byte, empty ones left out.
    var pathComponents: [String] {
        utf8.split(separator: 0x2f).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension RemoteFS {
    /// Up to max bytes of a file from offset (for the service's read()).
    func read(_ path: String, offset: UInt64, max: Int) throws(SFTPError) -> [UInt8] {
        let handle = try open(path, flags: LIBSSH2_FXF_READ, what: "cannot open")
        defer { libssh2_sftp_close_handle(handle) }
        libssh2_sftp_seek64(handle, offset)
        var out = [UInt8](repeating: 0, count: max)
        var got = 0
        while got < max {
            let n = out[got...].withUnsafeMutableBytes { libssh2_sftp_read(handle, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw error(path, "cannot read") }
            got += n
        }
        return Array(out[..<got])
    }
}

extension RemoteFS {
    /// The SHA-256 of a remote file's first `count` bytes, read back through the SFTP channel
    /// (SFTP v3 has no hashing request; OpenSSH's server offers none); nil when the file is
    /// shorter. Reads in 2 MiB calls, so libssh2 keeps 8 MiB requested (a download far away keeps 7.2 MB).
    func sha256(_ path: String, prefix count: UInt64) throws(SFTPError) -> String? {
        let handle = try open(path, flags: LIBSSH2_FXF_READ, what: "cannot open")
        defer { libssh2_sftp_close_handle(handle) }
        let hasher = SHA256()
        let chunk = 2 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buf.deallocate() }
        var left = count
        while left > 0 {
            let n = libssh2_sftp_read(handle, buf.assumingMemoryBound(to: CChar.self), Int(min(UInt64(chunk), left)))
            if n == 0 { return nil }
            guard n > 0 else { throw error(path, "cannot read") }
            hasher.update(buf, n)
            left -= min(UInt64(n), left)
        }
        return hasher.hexDigest()
    }
}
