import CLibSSH2
import Glibc
import SSHCrypto

/// One local file to a remote partial file, committed by rename once the server holds exactly
/// the file's bytes. Runs on the connection's executor (inside SFTPConnection.run).
struct Upload {
    let fs: RemoteFS
    let extensions: OpenSSHExtensions
    let job: FileJob
    let control: TransferControl
    let observer: TransferObserver
    let checkpoints: Checkpoints
    /// More connections for segments of a large file (see Segments.swift); may be empty.
    var helpers: [SFTPConnection] = []
    /// SFTP channels each connection spreads its segments over (the `channels` setting).
    var channels = 1

    /// `channels`, with Termhost's libssh2 only (WriteRequests.patched); 1 otherwise.
    var channelsPerConnection: Int { WriteRequests.patched ? channels : 1 }

    func run() throws(SFTPError) -> UInt64 {
        let fd = open(job.localPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SFTPError.local(job.localPath, "cannot open") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SFTPError.local(job.localPath, "cannot stat") }
        guard FileType.of(st) == FileType.regular else { throw SFTPError(.failed, "sftp: \(job.localPath.shown): not a regular file") }
        let size = UInt64(st.st_size), mtime = UInt64(st.st_mtim.tv_sec)
        // An atomic replace needs posix-rename; find out before sending a byte.
        if job.overwrite, try fs.statIfExists(job.remotePath) != nil, try !extensions.supportsPosixRename(fs) {
            throw SFTPError(.refused, "sftp: cannot replace \(fs.host):\(job.remotePath.shown) atomically: the server does not offer posix-rename@openssh.com; remove it first or upload under another name")
        }
        let partial = job.partialPath
        var offset: UInt64 = 0
        let handle: OpaquePointer
        if job.resume, let checkpoint = checkpoints.load(job.checkpointKey) {
            handle = try resumePartial(checkpoint, fd: fd, size: size, mtime: mtime)
            offset = checkpoint.offset
        } else {
            if job.resume, try fs.statIfExists(partial, follow: false) != nil {
                throw SFTPError(.refused, "sftp: \(fs.host):\(partial.shown): no checkpoint records what this partial file holds (it was not paused by termhost, or was already resumed); remove it, or upload without --resume to replace it")
            }
            // Before the partial exists, so that no way of ending this process leaves a partial
            // without a record (a resumed transfer keeps the checkpoint it resumed from).
            try checkpoints.started(job, sourceSize: size, sourceMtime: mtime)
            handle = try createPartial()
        }
        var handleOpen = true
        defer { if handleOpen { libssh2_sftp_close_handle(handle) } }
        observer.fileStarted(job.display, size: size, offset: offset)

        // Segments on every connection, and on several channels of each (UploadLanes). With
        // several channels, more segments than lanes: the channels come up one after another,
        // and a lane that started late takes fewer. With one, a segment per connection.
        let channels = channelsPerConnection
        let connections = 1 + helpers.count, lanes = connections * max(1, channels)
        let segments = Segments(from: offset, to: size, parts: channels > 1 ? 8 * lanes : connections, minimum: Segments.channelMinimum, control: control)
        let helpers = self.helpers, primary = fs, primaryExtensions = extensions, upload = self
        let (moved, failure) = segments.run(groups: connections) { (group, parts) throws(SFTPError) -> UInt64 in
            // This connection's parts start on the handle created above; a helper opens the
            // partial for its own.
            guard group > 0 else {
                return try upload.send(parts, fd: fd, fs: primary, extensions: primaryExtensions, handle: handle, segments: segments)
            }
            return try helpers[group - 1].run { (fs, extensions) throws(SFTPError) -> UInt64 in
                let own = try fs.open(partial, flags: LIBSSH2_FXF_WRITE, what: "cannot open")
                // Not on a session left with a packet half sent: the close would wait for its timeout.
                defer { if !fs.packetHalfSent { libssh2_sftp_close_handle(own) } }
                libssh2_sftp_seek64(own, segments.ranges[parts[0]].lowerBound)
                return try upload.send(parts, fd: fd, fs: fs, extensions: extensions, handle: own, segments: segments)
            }
        }
        if let failure {
            if failure.kind != .connectionLost { libssh2_sftp_close_handle(handle) }
            handleOpen = false
            try stopped(failure, fd: fd, offset: segments.prefixEnd, size: size, mtime: mtime)
        }
        offset += moved
        // Every byte is acknowledged by the server: the count is exact without asking again.
        guard offset == size else {
            libssh2_sftp_close_handle(handle)
            handleOpen = false
            try? fs.remove(partial)
            checkpoints.remove(job.checkpointKey)
            throw SFTPError(.failed, "sftp: \(job.localPath.shown) changed during the upload (\(size) bytes expected, \(offset) read); nothing was committed")
        }
        // Every byte is on the server from here: a failure keeps the partial with a checkpoint
        // of the whole file, so `sftp paused` lists it and `--resume` verifies and commits it.
        do throws(SFTPError) {
            try fs.fsetstat(handle, path: partial, mode: UInt32(st.st_mode) & 0o777, mtime: mtime)
            guard libssh2_sftp_close_handle(handle) == 0 else { handleOpen = false; throw fs.error(partial, "cannot close") }
            handleOpen = false
            try commit(partial)
        } catch {
            try kept(error, fd: fd, offset: size, size: size, mtime: mtime)
        }
        checkpoints.remove(job.checkpointKey)
        return size
    }

    /// Sends one connection's segments of the local file (UploadStream), over as many of its
    /// channels as `channels` allows (UploadLanes), starting on `handle`, which is at the first
    /// one's start. Requests are as large as the server allows (WriteRequests). Returns the
    /// bytes acknowledged.
    func send(_ parts: [Int], fd: Int32, fs: RemoteFS, extensions: OpenSSHExtensions, handle: OpaquePointer,
              segments: Segments) throws(SFTPError) -> UInt64 {
        let bytes = parts.reduce(UInt64(0)) { $0 + (segments.ranges[$1].upperBound - segments.ranges[$1].lowerBound) }
        let request = WriteRequests.prepare(fs, extensions, bytes: bytes, path: job.remotePath)
        // The extensions' channel first (posix-rename, small files' pipelines): once the
        // upload's further channels are open, the server may allow no other (MaxSessions).
        if channelsPerConnection > 1, parts.count > 1 { _ = try? extensions.start(fs) }
        return try UploadLanes(fs: fs, handle: handle, parts: parts, channels: channelsPerConnection, segments: segments, fd: fd, job: job,
                               request: request, observer: observer).run()
    }

    /// Connection loss and pause keep the remote partial with a checkpoint of the acknowledged
    /// bytes; cancel and other failures remove it (naming it when that fails).
    private func stopped(_ failure: SFTPError, fd: Int32, offset: UInt64, size: UInt64, mtime: UInt64) throws(SFTPError) -> Never {
        if failure.kind == .connectionLost || failure.kind == .paused {
            try kept(failure, fd: fd, offset: offset, size: size, mtime: mtime)
        }
        do { try fs.remove(job.partialPath) } catch {
            throw SFTPError(failure.kind, "\(failure.message); the remote partial file \(fs.host):\(job.partialPath.shown) could not be removed: \(error.message)")
        }
        checkpoints.remove(job.checkpointKey)
        throw failure
    }

    /// Keeps the remote partial for `--resume`: a checkpoint of the acknowledged bytes (the local
    /// source's prefix; resume truncates the remote partial to what this vouches for).
    private func kept(_ failure: SFTPError, fd: Int32, offset: UInt64, size: UInt64, mtime: UInt64) throws(SFTPError) -> Never {
        let prefix = SHA256.prefix(fd: fd, count: offset, deadline: control.deadline)
        try checkpoints.save(job.checkpointKey, Checkpoint(
            direction: "upload", host: job.host, remotePath: job.remotePath, localPath: job.localPath,
            partialPath: job.partialPath, sourceSize: size, sourceMtime: mtime, offset: prefix.count, sha256: prefix.hex))
        throw failure
    }

    /// Creates (or truncates) the remote partial. When that fails the start record goes too,
    /// unless the connection was lost, which may have happened after the server created it.
    private func createPartial() throws(SFTPError) -> OpaquePointer {
        do {
            return try fs.open(job.partialPath, flags: LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC, mode: 0o600, what: "cannot create")
        } catch {
            if error.kind != .connectionLost { checkpoints.remove(job.checkpointKey) }
            throw error
        }
    }

    /// Verifies that the local file is the one the checkpoint describes (size, time, SHA-256
    /// of the acknowledged prefix) and that the remote partial still holds that prefix (same
    /// SHA-256, read back), then opens the remote partial at the checkpoint.
    private func resumePartial(_ c: Checkpoint, fd: Int32, size: UInt64, mtime: UInt64) throws(SFTPError) -> OpaquePointer {
        guard c.direction == "upload", c.localPath == job.localPath else {
            throw SFTPError(.refused, "sftp: cannot resume into \(fs.host):\(job.partialPath.shown): it holds an upload of \(c.localPath.shown), not of \(job.localPath.shown); cancel that transfer first")
        }
        guard size == c.sourceSize, mtime == c.sourceMtime else {
            throw SFTPError(.refused, "sftp: cannot resume \(job.localPath.shown): it changed since the transfer paused (size \(c.sourceSize) -> \(size), modified \(c.sourceMtime) -> \(mtime)); cancel and start again")
        }
        let hasher = SHA256()
        guard hasher.feed(fd: fd, count: c.offset), hasher.hexDigest() == c.sha256 else {
            throw SFTPError(.refused, "sftp: cannot resume \(job.localPath.shown): its first \(c.offset) bytes are not the ones uploaded (SHA-256 differs); cancel and start again")
        }
        let partial = job.partialPath
        let remote = try fs.statIfExists(partial)
        // A start record whose partial was never created (the process ended in between).
        if remote == nil, c.offset == 0 { return try createPartial() }
        guard let remote, let held = remote.size, held >= c.offset else {
            throw SFTPError(.refused, "sftp: cannot resume: the remote partial \(fs.host):\(partial.shown) is missing or shorter than the \(c.offset) acknowledged bytes; cancel and start again")
        }
        // The server holds what it acknowledged unless something changed it since: read it
        // back (the local prefix was just shown to be the one that was sent).
        guard try fs.sha256(partial, prefix: c.offset) == c.sha256 else {
            throw SFTPError(.refused, "sftp: cannot resume into \(fs.host):\(partial.shown): its first \(c.offset) bytes are not the ones uploaded (SHA-256 differs); cancel and start again")
        }
        // Bytes past the checkpoint were sent but never acknowledged: drop them.
        if held > c.offset { try fs.truncate(partial, to: c.offset) }
        let handle = try fs.open(partial, flags: LIBSSH2_FXF_WRITE, what: "cannot resume: cannot open")
        libssh2_sftp_seek64(handle, c.offset)
        return handle
    }

    /// Renames the partial onto the final name: posix-rename (atomic replace) when overwriting,
    /// SFTP v3 rename (refuses an existing name) otherwise.
    private func commit(_ partial: String) throws(SFTPError) {
        if job.overwrite, try extensions.supportsPosixRename(fs) {
            try extensions.posixRename(fs, from: partial, to: job.remotePath)
            return
        }
        do { try fs.rename(partial, job.remotePath) } catch {
            throw SFTPError(error.kind, "\(error.message) (kept the upload as \(fs.host):\(partial.shown))", status: error.status)
        }
    }
}
