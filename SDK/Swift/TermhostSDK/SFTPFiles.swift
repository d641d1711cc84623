import CTermhost

/// `termhost_sftp_files_t` ("org.termhost.sftp.files/1", SDK/include/termhost/sftp/files.h):
/// browsing and transfers over SFTP from the SFTP plugin, on connections from the SSH plugin's
/// transport (trust and authentication prompts go to the scene passed; scene 0 fails closed).
/// Listings and attributes come back as the JSON text the header describes. Every call may be
/// made from any thread and blocks until done.
public struct SFTPFiles: @unchecked Sendable {
    public let vtable: UnsafePointer<termhost_sftp_files_t>
    let host: UnsafePointer<termhost_host_t>

    /// The service, when the SFTP feature is active and provides it. [any-thread]
    public init?(host: PluginHost) {
        guard let raw = host.service(TERMHOST_SFTP_FILES) else { return nil }
        self.host = host.raw
        vtable = raw.assumingMemoryBound(to: termhost_sftp_files_t.self)
    }

    /// `open`: connects (as the SSH transport's open does) and starts SFTP. The error's code is
    /// TERMHOST_ERR_DENIED for refused trust or credentials, TERMHOST_ERR_INVALID_ARGUMENT for
    /// a destination that is neither a saved host nor user@host[:port] or a server without SFTP,
    /// TERMHOST_ERR_IO for network failures. [any-thread]
    public func open(_ destination: String, scene: UInt64) throws(PluginError) -> Session {
        var handle: OpaquePointer?
        try check { vtable.pointee.open(host, scene, destination, &handle, $0) }
        return Session(vtable: vtable, handle: handle)
    }

    /// One browsing session; call `close()` when done (later calls get TERMHOST_ERR_NOT_FOUND).
    /// Calls on one session run one at a time, from any thread.
    public struct Session: @unchecked Sendable, Equatable {
        let vtable: UnsafePointer<termhost_sftp_files_t>
        public let handle: OpaquePointer?

        public static func == (a: Session, b: Session) -> Bool { a.handle == b.handle }

        /// `close`: disconnects and frees the session. [any-thread]
        public func close() { vtable.pointee.close(handle) }

        /// `list`: a directory's entries as a JSON array of {"name","type","size","mode","mtime",
        /// "uid","gid"}, sorted by name, without "." and ".."; a file gives a one-element array.
        /// [any-thread]
        public func list(_ path: String) throws(PluginError) -> String {
            String(decoding: try ByteSink.collect { vtable.pointee.list(handle, path, ByteSink.sink, $0, $1) }, as: UTF8.self)
        }

        /// `stat`: one path's attributes as a JSON object as in `list`; `followLinks` follows a
        /// final symbolic link. [any-thread]
        public func stat(_ path: String, followLinks: Bool = true) throws(PluginError) -> String {
            String(decoding: try ByteSink.collect { vtable.pointee.stat(handle, path, followLinks ? 1 : 0, ByteSink.sink, $0, $1) }, as: UTF8.self)
        }

        /// `read`: up to maxBytes of a file from offset (fewer at its end, none past it).
        /// [any-thread]
        public func read(_ path: String, offset: UInt64 = 0, maxBytes: UInt64) throws(PluginError) -> [UInt8] {
            try ByteSink.collect { vtable.pointee.read(handle, path, offset, maxBytes, ByteSink.sink, $0, $1) }
        }

        /// `make_directory`; the server's reason comes back in the error. [any-thread]
        public func makeDirectory(_ path: String) throws(PluginError) {
            try check { vtable.pointee.make_directory(handle, path, $0) }
        }

        /// `remove_file`. [any-thread]
        public func removeFile(_ path: String) throws(PluginError) {
            try check { vtable.pointee.remove_file(handle, path, $0) }
        }

        /// `remove_directory` (an empty one). [any-thread]
        public func removeDirectory(_ path: String) throws(PluginError) {
            try check { vtable.pointee.remove_directory(handle, path, $0) }
        }

        /// `rename`: never replaces an existing target. [any-thread]
        public func rename(_ from: String, to: String) throws(PluginError) {
            try check { vtable.pointee.rename(handle, from, to, $0) }
        }
    }
}
