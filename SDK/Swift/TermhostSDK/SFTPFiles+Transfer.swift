import CTermhost

/// Transfers through the SFTP plugin's queue (files.h: transfer, stop).
extension SFTPFiles {
    /// When a transfer's target exists (`termhost_sftp_conflict_t`).
    public enum Conflict: UInt32, Sendable {
        /// Refuse before anything moves (the default).
        case fail = 0
        /// Replace atomically (refused where that is impossible).
        case overwrite = 1
        case skip = 2
        /// The new file becomes "name (1).ext".
        case keepBoth = 3
    }

    /// `termhost_sftp_transfer_t`: what to move, and how.
    public struct TransferRequest: Sendable {
        public var upload: Bool
        /// A saved host's name or "user@host[:port]".
        public var destination: String
        /// The source of a download, the target of an upload.
        public var remotePath: String
        /// The target of a download, the source of an upload; a relative path is taken from the
        /// host process's working directory.
        public var localPath: String
        /// Directories, recursively (TERMHOST_SFTP_RECURSIVE).
        public var recursive: Bool
        /// Continue from a checkpoint after verifying the source (TERMHOST_SFTP_RESUME).
        public var resume: Bool
        public var conflict: Conflict
        /// The caller's nonzero name for `stop`, or 0; one running transfer per cookie.
        public var cookie: UInt64
        /// The bandwidth limit for the whole transfer (ABI 1.1 field); nil or 0: none.
        public var bytesPerSecond: UInt64?

        public init(upload: Bool, destination: String, remotePath: String, localPath: String,
                    recursive: Bool = false, resume: Bool = false, conflict: Conflict = .fail,
                    cookie: UInt64 = 0, bytesPerSecond: UInt64? = nil) {
            self.upload = upload
            self.destination = destination
            self.remotePath = remotePath
            self.localPath = localPath
            self.recursive = recursive
            self.resume = resume
            self.conflict = conflict
            self.cookie = cookie
            self.bytesPerSecond = bytesPerSecond
        }
    }

    /// Progress of one file: its path, bytes moved so far, and its total. Called on a transfer
    /// worker thread while `transfer` runs.
    public typealias Progress = @Sendable (_ path: String, _ bytes: UInt64, _ total: UInt64) -> Void

    /// `transfer`: runs the request through the process's transfer queue and returns when it
    /// has ended. `summary` gets the JSON summary ({"files","done","skipped",...,"errors":[...]})
    /// before the call returns or throws, for every transfer that ran, also one that failed or
    /// was stopped (not for a refusal before anything moved). The error's code is
    /// TERMHOST_ERR_CANCELLED when stopped, TERMHOST_ERR_IO when a file failed or the
    /// connection was lost, TERMHOST_ERR_DENIED when trust, credentials or the conflict policy
    /// refused before anything moved, TERMHOST_ERR_INVALID_ARGUMENT for a cookie already in
    /// use. [any-thread; blocks]
    public func transfer(_ request: TransferRequest, scene: UInt64, progress: Progress? = nil,
                         summary: ((String) -> Void)? = nil) throws(PluginError) {
        final class Reports {
            let progress: Progress?
            init(_ progress: Progress?) { self.progress = progress }
        }
        let reports = Reports(progress)
        let summarySink = ByteSink()
        defer { if let bytes = summarySink.bytes { summary?(String(decoding: bytes, as: UTF8.self)) } }
        var flags: UInt32 = 0
        if request.recursive { flags |= UInt32(TERMHOST_SFTP_RECURSIVE) }
        if request.resume { flags |= UInt32(TERMHOST_SFTP_RESUME) }
        try check { err in
            request.destination.withCString { destination in
                request.remotePath.withCString { remote in
                    request.localPath.withCString { local in
                        var raw = termhost_sftp_transfer_t(
                            struct_size: UInt32(MemoryLayout<termhost_sftp_transfer_t>.size), upload: request.upload ? 1 : 0,
                            destination: destination, remote_path: remote, local_path: local, flags: flags,
                            conflict: request.conflict.rawValue, cookie: request.cookie, bytes_per_second: request.bytesPerSecond ?? 0)
                        let onProgress: termhost_sftp_progress? = progress == nil ? nil : { user, path, bytes, total in
                            Unmanaged<Reports>.fromOpaque(user!).takeUnretainedValue().progress?(path.map { String(cString: $0) } ?? "", bytes, total)
                        }
                        return vtable.pointee.transfer(host, scene, &raw, onProgress, Unmanaged.passUnretained(reports).toOpaque(),
                                                       ByteSink.sink, Unmanaged.passUnretained(summarySink).toOpaque(), err)
                    }
                }
            }
        }
    }

    /// `stop`: stops the caller's running transfer with this cookie; `pause` keeps partial
    /// files and checkpoints (resume later), otherwise they are removed. TERMHOST_ERR_NOT_FOUND
    /// when no such transfer runs. [any-thread]
    public func stop(cookie: UInt64, pause: Bool) throws(PluginError) {
        try check { vtable.pointee.stop(host, cookie, pause ? 1 : 0, $0) }
    }
}
