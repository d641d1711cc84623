import CLibSSH2
import Glibc

/// One file from the server to a local partial file, renamed into place when the byte count
/// is exact. Runs on the connection's executor (inside SFTPConnection.run).
struct Download {
    let fs: RemoteFS
    let job: FileJob
    let control: TransferControl
    let observer: TransferObserver
    let checkpoints: Checkpoints

    func run() throws(SFTPError) -> UInt64 {
        let handle = try fs.open(job.remotePath, flags: LIBSSH2_FXF_READ, what: "cannot open")
        defer { libssh2_sftp_close_handle(handle) }
        let source = try fs.fstat(handle, path: job.remotePath)
        guard source.isRegular || source.permissions == nil else {
            throw SFTPError(.failed, "sftp: \(fs.host):\(job.remotePath): not a regular file")
        }
        let size = source.size ?? 0
        let partial = job.partialPath
        var offset: UInt64 = 0
        let fd: Int32
        // Read once: a store write per file would cost more than a small file's transfer, so the
        // checkpoint is removed at the end only when there was one.
        let saved = checkpoints.load(job.checkpointKey)
        if job.resume, let checkpoint = saved {
            fd = try resumePartial(checkpoint, source: source)
            offset = checkpoint.offset
            libssh2_sftp_seek64(handle, offset)
        } else {
            if job.resume, LocalFile.stat(partial) != nil {
                throw SFTPError(.refused, "sftp: \(partial): no checkpoint records what this partial file holds (it was not paused by termhost, or was already resumed); remove it, or download without --resume to replace it")
            }
            // Read as well as write: a pause hashes what was written.
            fd = open(partial, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw SFTPError.local(partial, "cannot create") }
        }
        var closed = false
        defer { if !closed { close(fd) } }
        observer.fileStarted(job.display, size: size, offset: offset)

        let buffer = UnsafeMutableRawPointer.allocate(byteCount: TransferBuffer.read, alignment: 16)
        defer { buffer.deallocate() }
        do throws(SFTPError) {
            while true {
                try control.check(job.display)
                // libssh2 asks for 4x the buffer ahead, without knowing the file's size: a small
                // file gets a buffer just past its end, so it costs one request, not 240.
                let want = min(TransferBuffer.read, Int(clamping: size > offset ? size - offset + 1 : 1))
                let n = libssh2_sftp_read(handle, buffer.assumingMemoryBound(to: CChar.self), max(want, 1))
                if n == 0 { break }
                guard n > 0 else { throw fs.error(job.remotePath, "cannot read") }
                try LocalFile.writeAll(fd, buffer, n, path: partial)
                offset += UInt64(n)
                observer.progressed(job.display, bytes: n)
                control.pace(n)
            }
        } catch {
            try stopped(error, fd: fd, offset: offset, source: source)
        }
        guard offset == size else {
            close(fd)
            closed = true
            unlink(partial)
            throw SFTPError(.failed, "sftp: \(fs.host):\(job.remotePath): the file changed during the transfer (\(size) bytes expected, \(offset) received); nothing was saved")
        }
        fchmod(fd, mode_t(source.mode & 0o777))
        if let mtime = source.mtime {
            var times = [timespec(tv_sec: time_t(mtime), tv_nsec: 0), timespec(tv_sec: time_t(mtime), tv_nsec: 0)]
            futimens(fd, &times)
        }
        close(fd)
        closed = true
        try LocalFile.commit(partial, to: job.localPath, replace: job.overwrite)
        if saved != nil { checkpoints.remove(job.checkpointKey) }
        return offset
    }

    /// Connection loss and pause keep the partial file with a checkpoint of its exact bytes;
    /// cancel and other failures remove it.
    private func stopped(_ error: SFTPError, fd: Int32, offset: UInt64, source: RemoteEntry) throws(SFTPError) -> Never {
        let keep = error.kind == .connectionLost || (error.kind == .stopped && control.requested == .pause)
        if keep {
            fsync(fd)
            let prefix = SHA256.prefix(fd: fd, count: offset, deadline: control.deadline)
            try checkpoints.save(job.checkpointKey, Checkpoint(
                direction: "download", host: job.host, remotePath: job.remotePath, localPath: job.localPath,
                partialPath: job.partialPath, sourceSize: source.size ?? 0, sourceMtime: source.mtime ?? 0,
                offset: prefix.count, sha256: prefix.hex))
            throw error
        }
        if unlink(job.partialPath) != 0 && errno != ENOENT {
            throw SFTPError(error.kind, "\(error.message); the partial file \(job.partialPath) could not be removed: \(String(cString: strerror(errno)))")
        }
        checkpoints.remove(job.checkpointKey)
        throw error
    }

    /// Verifies the checkpoint against the source and the partial file, then opens the partial
    /// at its verified end.
    private func resumePartial(_ c: Checkpoint, source: RemoteEntry) throws(SFTPError) -> Int32 {
        let partial = job.partialPath
        guard source.size == c.sourceSize, source.mtime == c.sourceMtime else {
            throw SFTPError(.refused, "sftp: cannot resume \(fs.host):\(job.remotePath): it changed since the transfer paused (size \(c.sourceSize) -> \(source.size.map(String.init) ?? "?"), modified \(c.sourceMtime) -> \(source.mtime.map(String.init) ?? "?")); cancel and start again")
        }
        // Read and write: the prefix is hashed before appending.
        let fd = open(partial, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw SFTPError.local(partial, "cannot resume: cannot open") }
        let hasher = SHA256()
        guard hasher.feed(fd: fd, count: c.offset), hasher.hexDigest() == c.sha256 else {
            close(fd)
            throw SFTPError(.refused, "sftp: cannot resume into \(partial): its first \(c.offset) bytes are not the ones downloaded (SHA-256 differs or the file is shorter); cancel and start again")
        }
        // Bytes past the checkpoint were never vouched for.
        guard ftruncate(fd, off_t(c.offset)) == 0, lseek(fd, off_t(c.offset), SEEK_SET) >= 0 else {
            close(fd)
            throw SFTPError.local(partial, "cannot resume")
        }
        return fd
    }
}
