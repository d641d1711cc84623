import CLibSSH2
import Glibc
import SSHCrypto

/// One file from the server to a local partial file, renamed into place when the byte count
/// is exact. Runs on the connection's executor (inside SFTPConnection.run).
///
/// A large file may be read as segments in parallel, one per connection in `helpers` besides
/// this one (Segments.swift): libssh2 1.10 decrypts on the calling thread only, so one
/// connection is bound to one core.
struct Download {
    let fs: RemoteFS
    let job: FileJob
    let control: TransferControl
    let observer: TransferObserver
    let checkpoints: Checkpoints
    var helpers: [SFTPConnection] = []

    func run() throws(SFTPError) -> UInt64 {
        var clock = Stopwatch()
        let handle = try fs.open(job.remotePath, flags: LIBSSH2_FXF_READ, what: "cannot open")
        defer { libssh2_sftp_close_handle(handle) }
        let opening = clock.lap()
        let source = try fs.fstat(handle, path: job.remotePath)
        let roundTrip = min(opening, clock.lap())
        guard source.isRegular || source.permissions == nil else {
            throw SFTPError(.failed, "sftp: \(fs.host):\(job.remotePath.shown): not a regular file")
        }
        let size = source.size ?? 0
        let partial = job.partialPath
        // The partial file, its final name and the directory holding both, opened without
        // following a link below the directory the user named (LocalTree).
        let tree = try LocalTree.parent(of: job.localPath, root: job.localRoot.isEmpty ? job.localPath.parentPath : job.localRoot)
        defer { tree.close() }
        let partialName = partial.lastComponent
        var offset: UInt64 = 0
        let fd: Int32
        if job.resume, let checkpoint = checkpoints.load(job.checkpointKey) {
            fd = try resumePartial(checkpoint, source: source, tree: tree)
            offset = checkpoint.offset
            libssh2_sftp_seek64(handle, offset)
        } else {
            if job.resume, tree.stat(partialName) != nil {
                throw SFTPError(.refused, "sftp: \(partial.shown): no checkpoint records what this partial file holds (it was not paused by termhost, or was already resumed); remove it, or download without --resume to replace it")
            }
            // Before the partial exists, so that no way of ending this process leaves a partial
            // without a record (a resumed transfer keeps the checkpoint it resumed from).
            try checkpoints.started(job, sourceSize: size, sourceMtime: source.mtime ?? 0)
            // Read as well as write: a pause hashes what was written.
            do { fd = try tree.openFile(partialName, flags: O_RDWR | O_CREAT | O_TRUNC, what: "cannot create") } catch {
                checkpoints.remove(job.checkpointKey)
                throw error
            }
        }
        var closed = false
        defer { if !closed { close(fd) } }
        observer.fileStarted(job.display, size: size, offset: offset)

        let segments = Segments(from: offset, to: size, parts: 1 + helpers.count, control: control)
        let buffer = ReadAhead.buffer(roundTripMicroseconds: roundTrip)
        // Said where it matters: a file that one read does not cover.
        if size - min(offset, size) > UInt64(buffer) {
            fs.debug("\(job.remotePath.shown): \(ReadAhead.describe(buffer: buffer, roundTripMicroseconds: roundTrip))")
        }
        let remote = job.remotePath, display = job.display
        // Its errors name the file the user asked for (the partial beside it is ours).
        let writer = PartialFileWriter(fd: fd, path: job.localPath)
        let helpers = self.helpers, primary = fs
        let (moved, segmentFailure) = segments.run { (index, range, isLast) throws(SFTPError) -> UInt64 in
            // Segment 0 on this connection and its open handle; the others on a helper each.
            guard index > 0 else {
                return try Download.read(range, isLast: isLast, fs: primary, handle: handle, remote: remote, buffer: buffer, writer: writer,
                                         display: display, segments: segments, observer: observer)
            }
            return try helpers[index - 1].run { (fs, _) throws(SFTPError) -> UInt64 in
                let own = try fs.open(remote, flags: LIBSSH2_FXF_READ, what: "cannot open")
                defer { libssh2_sftp_close_handle(own) }
                libssh2_sftp_seek64(own, range.lowerBound)
                return try Download.read(range, isLast: isLast, fs: fs, handle: own, remote: remote, buffer: buffer, writer: writer,
                                         display: display, segments: segments, observer: observer)
            }
        }
        var failure = segmentFailure
        // A stop that came with the last bytes' progress (written, so reported, at the end)
        // still applies: nothing is committed yet.
        if failure == nil { do throws(SFTPError) { try control.check(display) } catch { failure = error } }
        if let failure { try stopped(failure, fd: fd, offset: segments.prefixEnd, source: source, tree: tree) }
        offset = Pacing.saturatingAdd(offset, moved)
        guard offset == size else {
            close(fd)
            closed = true
            tree.remove(partialName)
            checkpoints.remove(job.checkpointKey)
            throw SFTPError(.failed, "sftp: \(fs.host):\(job.remotePath.shown): the file changed during the transfer (\(size) bytes expected, \(offset) received); nothing was saved")
        }
        fchmod(fd, mode_t(source.mode & 0o777))
        if let mtime = source.mtime {
            // The server's number: clamped into time_t, never a trap.
            let seconds = time_t(clamping: mtime)
            var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
            futimens(fd, &times)
        }
        close(fd)
        closed = true
        try tree.commit(partialName, to: job.localPath.lastComponent, replace: job.overwrite)
        checkpoints.remove(job.checkpointKey)
        return offset
    }

    /// Reads one segment into the partial file at its place, the writing done by `writer`'s
    /// thread. The last segment reads to the end of the file and past it (a file that grew
    /// shows up as more bytes); the others stop at their end. Returns the bytes written.
    static func read(_ range: Range<UInt64>, isLast: Bool, fs: RemoteFS, handle: OpaquePointer, remote: String, buffer bufferSize: Int,
                     writer: PartialFileWriter, display: String, segments: Segments, observer: TransferObserver) throws(SFTPError) -> UInt64 {
        let start = range.lowerBound
        let lane = writer.lane(bufferSize: bufferSize) { segments.counted($0, from: start, observer: observer, display: display) }
        var position = range.lowerBound
        do throws(SFTPError) {
            while true {
                try segments.check(display)
                let remaining = range.upperBound > position ? range.upperBound - position : 0
                if !isLast && remaining == 0 { break }
                // libssh2 asks for 4x the buffer ahead, without knowing the file's size: near the
                // end the buffer shrinks to just past it, so a small file costs one request, not dozens.
                let want = min(bufferSize, Int(clamping: isLast ? min(remaining, UInt64(Int.max)) + 1 : remaining))
                let buffer = try lane.next()
                let n = libssh2_sftp_read(handle, buffer.assumingMemoryBound(to: CChar.self), max(want, 1))
                guard n > 0 else {
                    lane.giveBack(buffer)
                    if n == 0 { break }
                    throw fs.error(remote, "cannot read")
                }
                lane.submit(buffer, n, at: position)
                position += UInt64(n)
                segments.pace(n)
            }
        } catch {
            // Nothing of it is left in memory when this returns: a pause checkpoints the file.
            // A write that failed says more than the stop it caused (a full disk, not a pause).
            throw lane.drain() ?? error
        }
        if let failure = lane.drain() { throw failure }
        return position - range.lowerBound
    }

    /// Connection loss and pause keep the partial file with a checkpoint of its exact bytes;
    /// cancel and other failures remove it.
    private func stopped(_ error: SFTPError, fd: Int32, offset: UInt64, source: RemoteEntry, tree: LocalTree) throws(SFTPError) -> Never {
        let keep = error.kind == .connectionLost || error.kind == .paused
        if keep {
            fsync(fd)
            let prefix = SHA256.prefix(fd: fd, count: offset, deadline: control.deadline)
            try checkpoints.save(job.checkpointKey, Checkpoint(
                direction: "download", host: job.host, remotePath: job.remotePath, localPath: job.localPath,
                partialPath: job.partialPath, sourceSize: source.size ?? 0, sourceMtime: source.mtime ?? 0,
                offset: prefix.count, sha256: prefix.hex))
            throw error
        }
        if !tree.remove(job.partialPath.lastComponent) {
            throw SFTPError(error.kind, "\(error.message); the partial file \(job.partialPath.shown) could not be removed: \(String(cString: strerror(errno)))")
        }
        checkpoints.remove(job.checkpointKey)
        throw error
    }

    /// Verifies the checkpoint against the source and the partial file, then opens the partial
    /// at its verified end.
    private func resumePartial(_ c: Checkpoint, source: RemoteEntry, tree: LocalTree) throws(SFTPError) -> Int32 {
        let partial = job.partialPath
        guard c.direction == "download", c.host == job.host, c.remotePath == job.remotePath else {
            throw SFTPError(.refused, "sftp: cannot resume into \(partial.shown): it holds a download of \(c.host):\(c.remotePath.shown), not of \(job.host):\(job.remotePath.shown); cancel that transfer first")
        }
        guard source.size == c.sourceSize, source.mtime == c.sourceMtime else {
            throw SFTPError(.refused, "sftp: cannot resume \(fs.host):\(job.remotePath.shown): it changed since the transfer paused (size \(c.sourceSize) -> \(source.size.map(String.init) ?? "?"), modified \(c.sourceMtime) -> \(source.mtime.map(String.init) ?? "?")); cancel and start again")
        }
        // Read and write: the prefix is hashed before appending.
        // As a new partial: never through a link planted under its name or above it.
        // A start record (offset 0) may outlive a partial that was never created.
        let fd = try tree.openFile(partial.lastComponent, flags: O_RDWR | (c.offset == 0 ? O_CREAT : 0), what: "cannot resume: cannot open")
        let hasher = SHA256()
        guard hasher.feed(fd: fd, count: c.offset), hasher.hexDigest() == c.sha256 else {
            close(fd)
            throw SFTPError(.refused, "sftp: cannot resume into \(partial.shown): its first \(c.offset) bytes are not the ones downloaded (SHA-256 differs or the file is shorter); cancel and start again")
        }
        // Bytes past the checkpoint were never vouched for.
        guard ftruncate(fd, off_t(clamping: c.offset)) == 0, lseek(fd, off_t(clamping: c.offset), SEEK_SET) >= 0 else {
            close(fd)
            throw SFTPError.local(partial, "cannot resume")
        }
        return fd
    }
}
