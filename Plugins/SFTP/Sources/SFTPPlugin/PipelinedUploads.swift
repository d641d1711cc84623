import CLibSSH2
import Glibc
import SSHCrypto

/// Small files uploaded many at once on one channel (SFTPPipe), so that a batch of them costs
/// a few round trips instead of a few per file. Through libssh2's SFTP API each request waits
/// for its reply: open, write, set attributes, close and rename are five round trips per file,
/// 250 ms at 50 ms, and files go one after another on a connection. Here each file's requests
/// go out as soon as the one before them is answered, beside up to `depth` other files':
///
///   open the partial  ->  write it whole, set mode and time, close  ->  rename into place
///
/// three round trips a file, every file in flight at once. The rules are Upload's: the bytes
/// go to `.NAME.termhost-partial`, renamed into place only when the server acknowledged every
/// request (posix-rename when replacing, SFTP's rename, which refuses an existing name,
/// otherwise); a start record comes before the partial exists; a failure removes the partial,
/// a rename that fails keeps it with a checkpoint of the whole file; a lost connection leaves
/// each file in flight paused. A file is read whole when it starts (at most `largest` bytes),
/// so what reaches the server is the file as it was at one moment.
/// Runs on the session's executor, like RemoteFS.
final class PipelinedUploads {
    /// Files up to this size go through the pipeline; larger ones through Upload.
    static let largest: UInt64 = 1 << 20
    /// Data bytes per write request: SFTP v3 servers take at least 32,768 (the protocol's
    /// draft, "all servers SHOULD support packets of at least 34000 bytes").
    static let request = 32_768

    /// Whether a job goes through the pipeline: an upload of a small file without a checkpoint
    /// (Upload verifies one). A resumed file's partial is created only if none is there; one
    /// that is goes to Upload, which refuses a partial no checkpoint vouches for.
    static func fits(_ job: FileJob, _ checkpoints: Checkpoints) -> Bool {
        job.direction == .upload && job.size <= largest && !(job.resume && checkpoints.load(job.checkpointKey) != nil)
    }

    private enum Request {
        case open, write(Int), setAttributes, close, rename, remove
    }

    private final class Flight {
        let job: FileJob
        let data: [UInt8]
        let mode: UInt32
        let mtime: UInt64
        var handle: [UInt8] = []
        /// Replies still due before the next step.
        var waiting = 0
        var failure: SFTPError?
        /// The rename (or, after a failure, the removal) is sent.
        var ending = false

        init(job: FileJob, data: [UInt8], mode: UInt32, mtime: UInt64) {
            self.job = job
            self.data = data
            self.mode = mode
            self.mtime = mtime
        }
    }

    private let fs: RemoteFS
    private let pipe: SFTPPipe
    private let control: TransferControl
    private let observer: TransferObserver
    private let checkpoints: Checkpoints
    private var pending: [UInt32: (flight: Flight, request: Request)] = [:]
    private var active = 0
    private var held = 0

    init(fs: RemoteFS, pipe: SFTPPipe, control: TransferControl, observer: TransferObserver, checkpoints: Checkpoints) {
        self.fs = fs
        self.pipe = pipe
        self.control = control
        self.observer = observer
        self.checkpoints = checkpoints
    }

    /// Moves the files `next` gives until it gives none (or a pause or cancel was asked: files
    /// in flight still finish, a few round trips), telling `record` how each ended. Returns the
    /// error that ended the channel (every file then in flight paused with it), or nil.
    /// Files Upload must move instead (one that grew past `largest`, or that replaces a target
    /// on a server without posix-rename, where Upload checks whether the target still exists)
    /// go to `retry`.
    func run(next: () -> FileJob?, record: (FileJob, FileOutcome) -> Void, retry: (FileJob) -> Void) -> SFTPError? {
        let ended = PipelineLoop.run(fs: fs, pipe: pipe, control: control, load: { (active, held) }, next: next,
                                     start: { start($0, record, retry) }, answer: { body throws(SFTPError) in try answer(body, record, retry) },
                                     inFlight: { PipelineLoop.unique(pending.values.map(\.flight)).map(\.job) }, record: record)
        if ended != nil { pending = [:] }
        return ended
    }

    /// Reads the file, records the start and sends the open; a file that cannot start is
    /// recorded as failed at once, one Upload must move goes to `retry`.
    private func start(_ job: FileJob, _ record: (FileJob, FileOutcome) -> Void, _ retry: (FileJob) -> Void) {
        let fd = open(job.localPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return record(job, .failed(SFTPError.local(job.localPath, "cannot open").message)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return record(job, .failed(SFTPError.local(job.localPath, "cannot stat").message)) }
        guard FileType.of(st) == FileType.regular else { return record(job, .failed("sftp: \(job.localPath.shown): not a regular file")) }
        let size = Int(clamping: max(st.st_size, 0))
        // One byte more than the size: a file that grew shows up as more bytes.
        var data = [UInt8](repeating: 0, count: min(size, Int(PipelinedUploads.largest)) + 1)
        var got = 0
        while got < data.count {
            let n = data[got...].withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(got)) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return record(job, .failed(SFTPError.local(job.localPath, "cannot read").message)) }
            if n == 0 { break }
            got += n
        }
        guard got == size, size <= PipelinedUploads.largest else { return retry(job) }
        data.removeLast(data.count - got)
        if job.overwrite, pipe.extensions["posix-rename@openssh.com"] == nil { return retry(job) }
        let mtime = UInt64(max(st.st_mtim.tv_sec, 0))
        do throws(SFTPError) { try checkpoints.started(job, sourceSize: UInt64(size), sourceMtime: mtime) } catch {
            return record(job, .failed(error.message))
        }
        observer.fileStarted(job.display, size: UInt64(size), offset: 0)
        let flight = Flight(job: job, data: data, mode: UInt32(st.st_mode) & 0o777, mtime: mtime)
        active += 1
        held += data.count
        send(flight, .open) {
            $0.appendString(job.partialPath)
            $0.appendUInt32(SFTPPacket.writing | SFTPPacket.creating | (job.resume ? SFTPPacket.exclusive : SFTPPacket.truncating))
            $0.appendUInt32(SFTPPacket.permissions)
            $0.appendUInt32(0o600)
        }
    }

    private func send(_ flight: Flight, _ request: Request, _ fields: (inout [UInt8]) -> Void) {
        let type: UInt8 = switch request {
        case .open: SFTPPacket.open
        case .write: SFTPPacket.write
        case .setAttributes: SFTPPacket.fsetstat
        case .close: SFTPPacket.close
        case .rename: flight.job.overwrite ? SFTPPacket.extended : SFTPPacket.rename
        case .remove: SFTPPacket.remove
        }
        pending[pipe.request(type, fields)] = (flight, request)
        flight.waiting += 1
    }

    private func answer(_ body: [UInt8], _ record: (FileJob, FileOutcome) -> Void, _ retry: (FileJob) -> Void) throws(SFTPError) {
        guard let reply = SFTPReply.parse(body) else { throw SFTPError(.failed, "sftp: \(fs.host): malformed SFTP reply") }
        guard let (flight, request) = pending.removeValue(forKey: reply.id) else {
            throw SFTPError(.failed, "sftp: \(fs.host): an SFTP reply to no request (id \(reply.id))")
        }
        flight.waiting -= 1
        let job = flight.job, partial = job.partialPath
        switch request {
        case .open:
            guard case .handle(_, let handle) = reply else {
                // Nothing was created: the start record goes too (Upload's createPartial).
                checkpoints.remove(job.checkpointKey)
                // A resumed file whose partial is there already: Upload says what to do.
                if job.resume {
                    active -= 1
                    held -= flight.data.count
                    return retry(job)
                }
                return finish(flight, .failed(fs.refusal(reply, "cannot create", partial).message), record)
            }
            flight.handle = handle
            writeWhole(flight)
        case .write(let n):
            if case .status(_, 0) = reply { observer.progressed(job.display, bytes: n) } else { flight.failure = flight.failure ?? fs.refusal(reply, "cannot write", partial) }
        case .setAttributes:
            if case .status(_, 0) = reply {} else { flight.failure = flight.failure ?? fs.refusal(reply, "cannot set attributes of", partial) }
        case .close:
            if case .status(_, 0) = reply {} else { flight.failure = flight.failure ?? fs.refusal(reply, "cannot close", partial) }
        case .rename:
            guard case .status(_, 0) = reply else {
                // Every byte is on the server: the partial stays with a checkpoint of the whole
                // file, so `sftp paused` lists it and --resume verifies and commits it.
                let renamed = fs.refusal(reply, "cannot rename", partial)
                let kept = "\(renamed.message.replacingOccurrences(of: "\(fs.host):\(partial.shown): ", with: "\(fs.host):\(partial.shown) to \(job.remotePath.shown): ")) (kept the upload as \(fs.host):\(partial.shown))"
                do throws(SFTPError) {
                    try checkpoints.save(job.checkpointKey, Checkpoint(
                        direction: "upload", host: job.host, remotePath: job.remotePath, localPath: job.localPath, partialPath: partial,
                        sourceSize: UInt64(flight.data.count), sourceMtime: flight.mtime, offset: UInt64(flight.data.count),
                        sha256: SHA256.hex(SHA256.digest(flight.data))))
                } catch {
                    return finish(flight, .failed("\(kept); \(error.message)"), record)
                }
                return finish(flight, .failed(kept), record)
            }
            checkpoints.remove(job.checkpointKey)
            return finish(flight, .done(bytes: UInt64(flight.data.count)), record)
        case .remove:
            let message = flight.failure?.message ?? "sftp: \(fs.host):\(partial.shown): failed"
            // A partial that could not be removed keeps its start record: `sftp paused` lists
            // it and `sftp cancel` removes it.
            guard case .status(_, 0) = reply else {
                return finish(flight, .failed("\(message); the remote partial file \(fs.host):\(partial.shown) could not be removed: \(fs.refusal(reply, "cannot remove", partial).message)"), record)
            }
            checkpoints.remove(job.checkpointKey)
            return finish(flight, .failed(message), record)
        }
        guard flight.waiting == 0, !flight.ending else { return }
        // Written, set and closed: rename into place, or remove the partial after a failure.
        flight.ending = true
        if flight.failure != nil {
            send(flight, .remove) { $0.appendString(partial) }
        } else if job.overwrite {
            send(flight, .rename) {
                $0.appendString("posix-rename@openssh.com")
                $0.appendString(partial)
                $0.appendString(job.remotePath)
            }
        } else {
            send(flight, .rename) {
                $0.appendString(partial)
                $0.appendString(job.remotePath)
            }
        }
    }

    /// Writes, attributes and close go out back to back: the server handles a channel's
    /// requests in order, so the close comes after the last write.
    private func writeWhole(_ flight: Flight) {
        let handle = flight.handle, data = flight.data
        var offset = 0
        repeat {
            let n = min(PipelinedUploads.request, data.count - offset)
            if n > 0 {
                send(flight, .write(n)) {
                    $0.appendBytes(handle)
                    $0.appendUInt64(UInt64(offset))
                    $0.appendUInt32(UInt32(n))
                    $0.append(contentsOf: data[offset..<(offset + n)])
                }
            }
            offset += n
        } while offset < data.count
        send(flight, .setAttributes) {
            $0.appendBytes(handle)
            $0.appendUInt32(SFTPPacket.permissions | SFTPPacket.times)
            $0.appendUInt32(flight.mode)
            $0.appendUInt32(UInt32(truncatingIfNeeded: flight.mtime))
            $0.appendUInt32(UInt32(truncatingIfNeeded: flight.mtime))
        }
        send(flight, .close) { $0.appendBytes(handle) }
        control.pace(data.count)
    }

    private func finish(_ flight: Flight, _ outcome: FileOutcome, _ record: (FileJob, FileOutcome) -> Void) {
        active -= 1
        held -= flight.data.count
        record(flight.job, outcome)
    }
}
