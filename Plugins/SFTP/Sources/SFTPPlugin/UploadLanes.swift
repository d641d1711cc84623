import CLibSSH2
import LibSSH2

/// The segments of one upload that one connection moves, spread over several SFTP channels of
/// its session and driven by one thread without blocking. Why: the server's window of one
/// channel (2 MiB from OpenSSH's sshd) caps a channel at one window per round trip, about
/// 36 MB/s at 50 ms; k channels send k windows per round trip over the same connection (one
/// key exchange, one log-in, no second prompt). libssh2 allows one caller per session, so the
/// channels cannot each have a thread: without blocking, one thread turns from a channel to
/// the next whenever libssh2 can go no further on it, and waits for the socket only when none
/// can.
///
/// Lane 0 writes through the handle the upload created on libssh2's SFTP channel
/// (UploadStream); the others are SFTP sessions termhost speaks itself (PipeLane), kept in
/// ExtraChannels for later files. They open their channels one after another (libssh2 opens
/// one at a time per session) while lane 0 already writes, and take segments in order as
/// they come free, so a lane that started late takes fewer.
///
/// libssh2's rule for a call that returned EAGAIN with a packet half sent (the socket full):
/// that packet must go out before any other on the session, and only a call on the same
/// channel sends it; any other call returns EAGAIN for ever (transport.c, send_existing). So
/// after such a call its lane alone runs until the packet is out, and a stop sends it out
/// before the session is used again. Runs on the session's executor, like RemoteFS.
final class UploadLanes {
    private enum Lane {
        /// Lane 0, on libssh2's channel.
        case first(UploadStream)
        case further(PipeLane)
        case done

        var working: Bool {
            switch self {
            case .first: true
            case .further(let lane): !lane.isDone
            case .done: false
            }
        }
    }

    private let fs: RemoteFS
    private let segments: Segments
    private let job: FileJob
    private let observer: TransferObserver
    private var lanes: [Lane]
    /// Segments no lane has taken yet, in order.
    private let queue: SegmentQueue
    /// The lane whose call left a packet half sent: it alone runs until the packet is out.
    private var owner: Int?
    /// Bytes the server acknowledged on lane 0.
    private var acknowledged: UInt64 = 0
    /// The lane whose call failed: after libssh2's sftp_write fails, it has dropped its
    /// requests, so the same bytes passed again would go to other offsets.
    private var failedLane: Int?

    /// Whether the last call left a packet half sent (RemoteFS.packetHalfSent).
    private var halfSent: Bool { fs.packetHalfSent }

    /// `parts` are this connection's segments; `handle` is open on fs's channel at the first
    /// one's start. Up to `channels` lanes, no more than there are segments.
    init(fs: RemoteFS, handle: OpaquePointer, parts: [Int], channels: Int, segments: Segments, fd: Int32, job: FileJob,
         request: Int, observer: TransferObserver) {
        self.fs = fs
        self.segments = segments
        self.job = job
        self.observer = observer
        queue = SegmentQueue(parts.dropFirst())
        let first = parts[0], began = ContinuousClock.now
        lanes = [.first(UploadStream(fs: fs, handle: handle, fd: fd, range: segments.ranges[first], isLast: segments.isLast(first),
                                     request: request, localPath: job.localPath, partialPath: job.partialPath))]
        for number in 1..<max(1, min(channels, parts.count)) {
            guard let extra = fs.channels else { break }
            let kept = extra.take()
            guard kept != nil || !extra.refused else { break }
            lanes.append(.further(PipeLane(number: number, kept: kept, queue: queue, fs: fs, segments: segments, fd: fd, job: job,
                                           request: request, observer: observer, began: began)))
        }
    }

    /// Moves every segment; returns the bytes the server acknowledged. On a stop or a failure
    /// the lanes are settled (unless the connection is lost) and the error is passed on; one
    /// that leaves the session unusable (a packet still half sent) is passed on as a lost
    /// connection, so that nothing else waits on it.
    func run() throws(SFTPError) -> UInt64 {
        libssh2_session_set_blocking(fs.session, 0)
        var usable = true
        defer {
            libssh2_session_set_blocking(fs.session, 1)
            // On an unusable session every call would wait for its timeout.
            for case .further(let lane) in lanes { if usable && !halfSent { lane.end() } else { lane.abandon() } }
        }
        var stall = WriteStall()
        var idle = 0
        do throws(SFTPError) {
            while lanes.contains(where: \.working) {
                try segments.check(job.display)
                var progressed = false
                for i in owner.map({ [$0] }) ?? Array(lanes.indices) {
                    // Whether the call left a packet half sent, also when it failed: settle()
                    // must finish that packet before anything else is sent.
                    defer { owner = halfSent ? i : nil }
                    do throws(SFTPError) {
                        if try step(i) { progressed = true }
                    } catch {
                        failedLane = i
                        throw error
                    }
                    if halfSent { break }
                }
                // One more pass before waiting: a lane's read may have taken another lane's
                // replies into libssh2, where no socket wait would see them.
                idle = progressed ? 0 : idle + 1
                if progressed { stall.progressed() } else if idle > 1 { try stall.wait(fs, job.partialPath, what: "cannot write") }
            }
        } catch {
            usable = error.kind != .connectionLost
            if usable, !settle() {
                usable = false
                throw SFTPError(.connectionLost, "\(error.message); the connection to \(fs.host) is left unusable (a packet half sent)")
            }
            throw error
        }
        return lanes.reduce(acknowledged) { total, lane in
            if case .further(let lane) = lane { total + lane.acknowledged } else { total }
        }
    }

    /// One call for lane i; true when it moved bytes or changed state.
    private func step(_ i: Int) throws(SFTPError) -> Bool {
        switch lanes[i] {
        case .first(let stream):
            switch try stream.step() {
            case .moved(let n):
                acknowledged += UInt64(n)
                segments.moved(n, from: stream.start, observer: observer, display: job.display)
                return true
            case .blocked:
                return false
            case .finished:
                if let segment = queue.take() {
                    stream.restart(at: segments.ranges[segment], isLast: segments.isLast(segment))
                } else {
                    lanes[i] = .done
                }
                return true
            }
        case .further(let lane):
            // One lane at a time opens a channel, and one starts its subsystem (PipeLane.step).
            let others = lanes.compactMap { if case .further(let other) = $0, other !== lane { other } else { nil } }
            return try lane.step(mayOpen: !others.contains(where: \.opensChannel), mayStart: !others.contains(where: \.startsSubsystem))
        case .done:
            return false
        }
    }

    /// After a stop or a failure (the connection still up). Returns whether the session is
    /// usable afterwards.
    ///
    /// First the call that left a packet half sent is made again (the same call, the same
    /// bytes), or nothing else may be sent. Then lane 0's requests are finished: libssh2 may
    /// have sent part of an SFTP request when the window filled, and any other request on that
    /// channel (the close, the removal of the partial) would land inside it, where the server
    /// reads it as data and answers nothing. The same bytes are passed again until every one is
    /// acknowledged (at most a window, a round trip or two) or the server refuses them; not
    /// after lane 0's own write failed, when libssh2 has dropped its requests. The further
    /// lanes' channels are shut whatever they hold (PipeLane.end). Bytes acknowledged here count
    /// toward the checkpoint (Segments), never paced.
    private func settle() -> Bool {
        defer { owner = nil }
        if let i = owner {
            switch lanes[i] {
            case .first(let stream):
                libssh2_session_set_blocking(fs.session, 1)
                drain(stream) { halfSent }
            case .further(let lane):
                _ = lane.finishPacket { halfSent }
            case .done:
                break
            }
        }
        libssh2_session_set_blocking(fs.session, 1)
        // A packet still half sent: any other call would wait for the session's timeout.
        guard !halfSent else { return false }
        if failedLane != 0, case .first(let first) = lanes[0] { drain(first) { first.unacknowledged > 0 } }
        for case .further(let lane) in lanes { lane.end() }
        return !halfSent
    }

    /// Passes lane 0's unacknowledged bytes again while `more` says so, until the server
    /// refuses them or stops answering (the session's timeout).
    private func drain(_ stream: UploadStream, while more: () -> Bool) {
        var stall = WriteStall()
        while more() {
            let n = stream.resend()
            if n > 0 {
                stall.progressed()
                acknowledged += UInt64(n)
                segments.counted(n, from: stream.start, observer: observer, display: job.display)
            } else if n < 0 || (try? stall.wait(fs, job.partialPath, what: "cannot write")) == nil {
                return
            }
        }
    }
}

/// The segments of a connection that no lane has taken yet, in order; the lanes take from
/// one queue (UploadLanes).
final class SegmentQueue {
    private var waiting: ArraySlice<Int>

    init(_ segments: ArraySlice<Int>) { waiting = segments }

    var isEmpty: Bool { waiting.isEmpty }

    func take() -> Int? { waiting.popFirst() }
}
