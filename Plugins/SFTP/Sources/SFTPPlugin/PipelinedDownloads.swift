import Glibc

/// Small files downloaded many at once on one channel (SFTPPipe), the other way round from
/// PipelinedUploads. Each file's requests go out as soon as the one before them is answered,
/// beside up to PipelineLoop.depth other files':
///
///   open  ->  fstat, read it whole (and one read past the end it was planned with), close
///
/// two round trips a file, every file in flight at once; then, here, the bytes go to
/// `.NAME.termhost-partial` beside the final name and are renamed into place, with the server's
/// mode and time, as Download does (LocalTree: no link below the directory the user named is
/// followed; a start record comes before the partial exists).
///
/// What the server answered must be the whole file as fstat describes it: every read below
/// its size full, the first at or past it the end. Anything else (the file grew past what the
/// reads cover, a server that returns short reads) is handed back to go through Download,
/// which reads to the end and says what changed. Runs on the session's executor, like RemoteFS.
final class PipelinedDownloads {
    /// Files up to this size (as planned) go through the pipeline; larger ones through Download.
    static let largest: UInt64 = 1 << 20
    /// Bytes per read request: what every SFTP server returns (libssh2 asks 30,000, OpenSSH's
    /// sftp 32,768).
    static let request = 32_768

    /// Whether a job goes through the pipeline: a download of a small file without a
    /// checkpoint (Download verifies one). A resumed file's partial is created only if none is
    /// there; one that is goes to Download, which refuses a partial no checkpoint vouches for.
    static func fits(_ job: FileJob, _ checkpoints: Checkpoints) -> Bool {
        job.direction == .download && job.size <= largest && !(job.resume && checkpoints.load(job.checkpointKey) != nil)
    }

    private enum Request {
        case open, fstat, read(offset: Int), close

        var what: String {
            switch self {
            case .open: "cannot open"
            case .fstat: "cannot stat"
            case .read: "cannot read"
            case .close: "cannot close"
            }
        }
    }

    private final class Flight {
        let job: FileJob
        /// The bytes the reads cover: the planned size and one request more.
        let covered: Int
        var data: [UInt8]
        var handle: [UInt8] = []
        /// The server gave a handle (which may be empty: the protocol does not forbid it).
        var opened = false
        var waiting = 0
        var source: RemoteEntry?
        /// Reads answered in full (their offsets), and the lowest offset answered with the end.
        var full: Set<Int> = []
        var end: Int?
        var failure: SFTPError?
        /// Something in the answers does not make the file fstat describes: Download retries it.
        var unexpected = false

        init(job: FileJob) {
            self.job = job
            let planned = Int(min(job.size, PipelinedDownloads.largest))
            covered = (planned / PipelinedDownloads.request + 1) * PipelinedDownloads.request
            data = [UInt8](repeating: 0, count: covered)
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

    /// Moves the files `next` gives (PipelineLoop), telling `record` how each ended and handing
    /// `retry` those Download must move. Returns the error that ended the channel (every file
    /// then in flight paused with it), or nil.
    func run(next: () -> FileJob?, record: (FileJob, FileOutcome) -> Void, retry: (FileJob) -> Void) -> SFTPError? {
        let ended = PipelineLoop.run(fs: fs, pipe: pipe, control: control, load: { (active, held) }, next: next,
                                     start: { start($0) }, answer: { body throws(SFTPError) in try answer(body, record, retry) },
                                     inFlight: { PipelineLoop.unique(pending.values.map(\.flight)).map(\.job) }, record: record)
        if ended != nil { pending = [:] }
        return ended
    }

    private func start(_ job: FileJob) {
        let flight = Flight(job: job)
        active += 1
        held += flight.covered
        observer.fileStarted(job.display, size: job.size, offset: 0)
        send(flight, .open) {
            $0.appendString(job.remotePath)
            $0.appendUInt32(SFTPPacket.reading)
            $0.appendUInt32(0)
        }
    }

    private func send(_ flight: Flight, _ request: Request, _ fields: (inout [UInt8]) -> Void) {
        let type: UInt8 = switch request {
        case .open: SFTPPacket.open
        case .fstat: SFTPPacket.fstat
        case .read: SFTPPacket.read
        case .close: SFTPPacket.close
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
        let remote = flight.job.remotePath
        switch (request, reply) {
        case (.open, .handle(_, let handle)):
            flight.handle = handle
            flight.opened = true
            send(flight, .fstat) { $0.appendBytes(handle) }
            for offset in stride(from: 0, to: flight.covered, by: PipelinedDownloads.request) {
                send(flight, .read(offset: offset)) {
                    $0.appendBytes(handle)
                    $0.appendUInt64(UInt64(offset))
                    $0.appendUInt32(UInt32(PipelinedDownloads.request))
                }
            }
            // The server answers a channel's requests in order: the close comes after the reads.
            send(flight, .close) { $0.appendBytes(handle) }
            control.pace(Int(clamping: flight.job.size))
        case (.open, _):
            return finish(flight, .failed(fs.refusal(reply, "cannot open", remote).message), record)
        case (.fstat, .attributes(_, let size, let permissions, let mtime)):
            flight.source = RemoteEntry(name: remote.lastComponent, size: size, permissions: permissions, mtime: mtime)
        case (.read(let offset), .data(_, let bytes)):
            // A read answers with at most what it asked; more is no SFTP.
            guard bytes.count <= PipelinedDownloads.request else { flight.unexpected = true; break }
            flight.data.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
            if bytes.count == PipelinedDownloads.request { flight.full.insert(offset) } else { flight.end = min(flight.end ?? .max, offset + bytes.count) }
        case (.read(let offset), .status(_, SFTPPacket.endOfFile)):
            flight.end = min(flight.end ?? .max, offset)
        case (.close, .status(_, 0)):
            break
        default:
            flight.failure = flight.failure ?? fs.refusal(reply, request.what, remote)
        }
        guard flight.waiting == 0, flight.opened else { return }
        // Every answer is in and the handle closed.
        if let failure = flight.failure { return finish(flight, .failed(failure.message), record) }
        guard let source = flight.source else { return finish(flight, .failed("sftp: \(fs.host):\(remote.shown): the server sent no attributes"), record) }
        guard source.isRegular || source.permissions == nil else {
            return finish(flight, .failed("sftp: \(fs.host):\(remote.shown): not a regular file"), record)
        }
        guard let size = source.size.map({ Int(clamping: $0) }), !flight.unexpected, whole(flight, size) else {
            fs.debug("\(remote.shown): the answers do not make the file fstat describes (\(source.size.map(String.init) ?? "no size"), planned \(flight.job.size)); reading it on its own")
            active -= 1
            held -= flight.covered
            return retry(flight.job)
        }
        guard let outcome = save(flight, source, size: size) else {
            active -= 1
            held -= flight.covered
            return retry(flight.job)
        }
        finish(flight, outcome, record)
    }

    /// Whether the answers make exactly `size` bytes: every read below it full (the last one
    /// to the size), and the end right there.
    private func whole(_ flight: Flight, _ size: Int) -> Bool {
        guard size < flight.covered, flight.end == size else { return false }
        return stride(from: 0, to: size / PipelinedDownloads.request * PipelinedDownloads.request, by: PipelinedDownloads.request)
            .allSatisfy { flight.full.contains($0) }
    }

    /// The bytes into the partial file, mode and time set, renamed into place (Download's steps).
    /// nil for a resumed file whose partial is there already: Download says what to do.
    private func save(_ flight: Flight, _ source: RemoteEntry, size: Int) -> FileOutcome? {
        let job = flight.job
        let partialName = job.partialPath.lastComponent
        do throws(SFTPError) {
            let tree = try LocalTree.parent(of: job.localPath, root: job.localRoot.isEmpty ? job.localPath.parentPath : job.localRoot)
            defer { tree.close() }
            try checkpoints.started(job, sourceSize: UInt64(size), sourceMtime: source.mtime ?? 0)
            let fd: Int32
            do { fd = try tree.openFile(partialName, flags: O_RDWR | O_CREAT | (job.resume ? O_EXCL : O_TRUNC), what: "cannot create") } catch {
                checkpoints.remove(job.checkpointKey)
                if job.resume, tree.stat(partialName) != nil { return nil }
                throw error
            }
            do throws(SFTPError) {
                defer { close(fd) }
                let written = flight.data.withUnsafeBytes { bytes in
                    var done = 0
                    while done < size {
                        let n = write(fd, bytes.baseAddress! + done, size - done)
                        if n < 0, errno == EINTR { continue }
                        guard n > 0 else { return false }
                        done += n
                    }
                    return true
                }
                guard written else { throw SFTPError.local(job.localPath, "cannot write") }
                fchmod(fd, mode_t(source.mode & 0o777))
                if let mtime = source.mtime {
                    let seconds = time_t(clamping: mtime)
                    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
                    futimens(fd, &times)
                }
            } catch {
                tree.remove(partialName)
                checkpoints.remove(job.checkpointKey)
                throw error
            }
            try tree.commit(partialName, to: job.localPath.lastComponent, replace: job.overwrite)
            checkpoints.remove(job.checkpointKey)
            observer.progressed(job.display, bytes: size)
            return .done(bytes: UInt64(size))
        } catch {
            return .failed(error.message)
        }
    }

    private func finish(_ flight: Flight, _ outcome: FileOutcome, _ record: (FileJob, FileOutcome) -> Void) {
        active -= 1
        held -= flight.covered
        record(flight.job, outcome)
    }
}
