import CLibSSH2

/// The loop both file pipelines run (PipelinedUploads, PipelinedDownloads), without blocking:
/// files start while there is room, requests go out and replies come in on the pipe, and the
/// socket is waited on only when nothing moved. Ends when no file is left in flight and `next`
/// gives no more (or a pause or cancel was asked: files in flight still finish, a few round
/// trips). Runs on the session's executor, like RemoteFS.
enum PipelineLoop {
    /// Files in flight at once, and the bytes of theirs held in memory at most (past it, no
    /// further file starts until one ends).
    static let depth = 64
    static let memory = 8 << 20

    /// `load`: files in flight and their bytes held in memory; `inFlight`: those files. Returns
    /// the error that ended the channel, every file then in flight recorded as paused with it
    /// (a start record it had stays, so `sftp paused` lists it and --resume or cancel deal
    /// with its partial), or nil.
    static func run(fs: RemoteFS, pipe: SFTPPipe, control: TransferControl, load: () -> (files: Int, bytes: Int),
                    next: () -> FileJob?, start: (FileJob) -> Void, answer: ([UInt8]) throws(SFTPError) -> Void,
                    inFlight: () -> [FileJob], record: (FileJob, FileOutcome) -> Void) -> SFTPError? {
        do throws(SFTPError) {
            try loop(fs: fs, pipe: pipe, control: control, load: load, next: next, start: start, answer: answer,
                     waitingOn: { inFlight().first?.remotePath ?? "" })
            return nil
        } catch {
            for job in inFlight() { record(job, .paused(offset: 0, reason: error.message)) }
            return error
        }
    }

    /// Each flight once, in no particular order (a flight waits for several replies).
    static func unique<Flight: AnyObject>(_ flights: some Sequence<Flight>) -> [Flight] {
        var seen = Set<ObjectIdentifier>()
        return flights.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    private static func loop(fs: RemoteFS, pipe: SFTPPipe, control: TransferControl, load: () -> (files: Int, bytes: Int),
                             next: () -> FileJob?, start: (FileJob) -> Void, answer: ([UInt8]) throws(SFTPError) -> Void,
                             waitingOn: () -> String) throws(SFTPError) {
        libssh2_session_set_blocking(fs.session, 0)
        defer { libssh2_session_set_blocking(fs.session, 1) }
        var stall = WriteStall()
        var taking = true
        var started = 0, peak = 0
        while true {
            while taking, load().files < depth, load().bytes < memory {
                guard control.requested == .none, let job = next() else {
                    taking = false
                    break
                }
                start(job)
                started += 1
                peak = max(peak, load().files)
            }
            if load().files == 0 {
                if started > 0 { fs.debug("\(started) small files in a pipeline on one channel, up to \(peak) at once") }
                return
            }
            let (replies, moved) = try pipe.pump(fs)
            for body in replies { try answer(body) }
            if moved {
                stall.progressed()
            } else {
                try stall.wait(fs, waitingOn(), what: "cannot transfer")
            }
        }
    }
}
