import CLibSSH2
import Glibc

/// One of an upload's further channels (UploadLanes), on an SFTP session termhost speaks
/// itself (SFTPPipe), started and driven without blocking.
///
/// Why not libssh2's SFTP here: `libssh2_sftp_init` opens the channel, starts the subsystem and
/// waits for the server's version, three round trips during which no other channel may start
/// (libssh2 keeps that state in the session), so at 50 ms the eighth channel of an upload
/// wrote from 1.16 s on. Here only the channel's open is the session's (one at a time, one
/// round trip): the subsystem's start is the channel's own, so the next lane opens meanwhile,
/// and the hello and the open of the partial file go out together. A lane writes from about
/// its number plus two round trips.
///
/// Writes are SSH_FXP_WRITE requests at explicit offsets, at most `inFlight` bytes
/// unacknowledged, and a lane takes its next segment without waiting for the last one's
/// acknowledgements. They count toward a segment only as its contiguous prefix (a checkpoint
/// vouches for no more), whatever order the server answers in.
/// Runs on the session's executor, like RemoteFS.
final class PipeLane {
    private enum State {
        /// Waits for its turn to open a channel (one lane at a time: `mayOpen`).
        case waitsForChannel
        /// libssh2_channel_open_ex was called and has not finished.
        case opensChannel
        /// The subsystem's start; begun once libssh2_channel_process_startup was called (one
        /// lane at a time: `mayStart`).
        case startsSubsystem(OpaquePointer, begun: Bool)
        /// A channel an earlier upload of the connection left (ExtraChannels), before its turn.
        case kept(SFTPPipe)
        case opensFile(SFTPPipe, id: UInt32)
        case writing(SFTPPipe, handle: [UInt8])
        case closing(SFTPPipe, id: UInt32)
        case done
    }

    /// One write request: acknowledged ones leave the front in order.
    private struct Flight {
        let id: UInt32
        let count: Int
        /// The start of the segment it belongs to (Segments counts by it).
        let segment: UInt64
        var acknowledged = false
    }

    /// Unacknowledged bytes a lane keeps in flight: the server's window (OpenSSH's 2 MiB) and
    /// as much again waiting in the client, so the window is refilled the moment it opens.
    static let inFlight = 2 * TransferBuffer.writeWindowLimit

    private let fs: RemoteFS
    private let number: Int
    private let segments: Segments
    private let fd: Int32
    private let job: FileJob
    private let request: Int
    private let observer: TransferObserver
    private let began: ContinuousClock.Instant
    private let queue: SegmentQueue
    private var state: State
    /// The channel of a start the server refused, freed by `end` (in blocking mode).
    private var refusedChannel: OpaquePointer?

    private var flights: [Flight] = []
    private var front = 0
    private var outstanding = 0
    /// The segment being read: where it starts, where the next request reads, where it ends.
    private var segment: (start: UInt64, next: UInt64, limit: UInt64)?
    private lazy var scratch = [UInt8](repeating: 0, count: request)
    /// Bytes the server acknowledged on this lane.
    private(set) var acknowledged: UInt64 = 0

    /// Lane `number` (from 1) of the upload; on `kept`, a channel an earlier upload of the
    /// connection left, or on a channel of its own.
    init(number: Int, kept: SFTPPipe?, queue: SegmentQueue, fs: RemoteFS, segments: Segments, fd: Int32, job: FileJob, request: Int,
         observer: TransferObserver, began: ContinuousClock.Instant) {
        self.number = number
        self.fs = fs
        self.segments = segments
        self.fd = fd
        self.job = job
        self.request = request
        self.observer = observer
        self.began = began
        self.queue = queue
        state = kept.map { .kept($0) } ?? .waitsForChannel
    }

    /// Whether libssh2 holds this lane's channel open (the session's one at a time).
    var opensChannel: Bool { if case .opensChannel = state { true } else { false } }
    /// Whether this lane's subsystem request waits for its answer.
    var startsSubsystem: Bool { if case .startsSubsystem(_, true) = state { true } else { false } }
    var isDone: Bool { if case .done = state { true } else { false } }

    /// One turn: true when it moved bytes or changed state. `mayOpen` is this lane's turn to
    /// open a channel, `mayStart` its turn to start the subsystem. Both are one lane at a time:
    /// libssh2 keeps a channel open's state in the session, and a subsystem's answer read
    /// while another channel waits for its own ends that other one's start ("Failed waiting
    /// for channel success": libssh2's packet.c gives up on a packet of the awaited type that
    /// belongs to another channel, and the channel cannot start again).
    func step(mayOpen: Bool, mayStart: Bool) throws(SFTPError) -> Bool {
        switch state {
        case .waitsForChannel:
            // No segment left, or the server allows no further channel (MaxSessions).
            guard !queue.isEmpty, fs.channels?.refused == false else {
                state = .done
                return true
            }
            guard mayOpen else { return false }
            state = .opensChannel
            return try step(mayOpen: true, mayStart: mayStart)
        case .opensChannel:
            guard let channel = SFTPPipe.openChannel(fs.session) else {
                if libssh2_session_last_errno(fs.session) == LIBSSH2_ERROR_EAGAIN { return false }
                try refused(SFTPPipe.openFailed(fs))
                return true
            }
            state = .startsSubsystem(channel, begun: false)
            return true
        case .startsSubsystem(let channel, let begun):
            guard begun || mayStart else { return false }
            let rc = SFTPPipe.startSubsystem(channel)
            if rc == LIBSSH2_ERROR_EAGAIN {
                state = .startsSubsystem(channel, begun: true)
                return !begun
            }
            guard rc == 0 else {
                refusedChannel = channel
                try refused(SFTPPipe.startFailed(fs))
                return true
            }
            let pipe = SFTPPipe(started: channel)
            fs.channels?.opened(pipe)
            openFile(on: pipe)
            return true
        case .kept(let pipe):
            openFile(on: pipe)
            return true
        case .opensFile(let pipe, _), .writing(let pipe, _), .closing(let pipe, _):
            let queued = try send(on: pipe)
            let (replies, exchanged) = try pipe.pump(fs)
            for body in replies { try answer(body) }
            return queued || exchanged
        case .done:
            return false
        }
    }

    /// Opens the partial file on `pipe` for the next segment, or gives the channel back when
    /// none is left.
    private func openFile(on pipe: SFTPPipe) {
        guard let next = queue.take() else {
            fs.channels?.giveBack(pipe)
            state = .done
            return
        }
        start(next)
        let path = job.partialPath
        let id = pipe.request(SFTPPacket.open) {
            $0.appendString(path)
            $0.appendUInt32(SFTPPacket.writing)
            $0.appendUInt32(0)            // no attributes: lane 0 created the file
        }
        state = .opensFile(pipe, id: id)
    }

    private func start(_ index: Int) {
        let range = segments.ranges[index]
        segment = (range.lowerBound, range.lowerBound, segments.isLast(index) ? UInt64.max : range.upperBound)
    }

    /// Queues write requests while the lane has room, taking the next segment when one ends.
    /// True when it queued any.
    private func send(on pipe: SFTPPipe) throws(SFTPError) -> Bool {
        guard case .writing(_, let handle) = state else { return false }
        var queued = false
        // The close goes once every write is answered, so its answer ends the lane whatever
        // order the server answers in.
        if segment == nil, outstanding == 0 {
            close(pipe, handle)
            return true
        }
        while outstanding < PipeLane.inFlight, var current = segment {
            let want = Int(min(UInt64(request), current.limit - current.next))
            var n = 0
            if want > 0 {
                repeat { n = scratch.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(current.next)) } } while n < 0 && errno == EINTR
                guard n >= 0 else { throw SFTPError.local(job.localPath, "cannot read") }
            }
            // The segment's end, or the file's (the last segment reads to it).
            guard n > 0 else {
                segment = nil
                if let index = queue.take() { start(index) }
                continue
            }
            let offset = current.next, data = scratch
            let id = pipe.request(SFTPPacket.write) {
                $0.appendBytes(handle)
                $0.appendUInt64(offset)
                $0.appendUInt32(UInt32(n))
                $0.append(contentsOf: data[0..<n])
            }
            flights.append(Flight(id: id, count: n, segment: current.start))
            outstanding += n
            current.next += UInt64(n)
            segment = current
            queued = true
        }
        return queued
    }

    /// Every byte read and acknowledged: the handle is closed.
    private func close(_ pipe: SFTPPipe, _ handle: [UInt8]) {
        let id = pipe.request(SFTPPacket.close) { $0.appendBytes(handle) }
        state = .closing(pipe, id: id)
    }

    private func answer(_ body: [UInt8]) throws(SFTPError) {
        guard let reply = SFTPReply.parse(body) else { throw SFTPError(.failed, "sftp: \(fs.host): malformed SFTP reply") }
        switch state {
        case .opensFile(let pipe, let id) where reply.id == id:
            guard case .handle(_, let handle) = reply else {
                // The channel itself is fine: a later upload may use it.
                fs.channels?.giveBack(pipe)
                state = .done
                throw fs.refusal(reply, "cannot open", job.partialPath)
            }
            let after = (ContinuousClock.now - began).components
            fs.debug("\(job.remotePath.shown): channel \(number + 1) of the upload writes from \(after.seconds * 1000 + after.attoseconds / 1_000_000_000_000_000) ms")
            state = .writing(pipe, handle: handle)
        case .closing(let pipe, let id) where reply.id == id:
            guard case .status(_, 0) = reply else { throw fs.refusal(reply, "cannot close", job.partialPath) }
            // Every write was answered before the close went, so none is left.
            fs.channels?.giveBack(pipe)
            state = .done
        default:
            try acknowledge(reply)
        }
    }

    private func acknowledge(_ reply: SFTPReply) throws(SFTPError) {
        guard let k = flights[front...].firstIndex(where: { $0.id == reply.id }) else {
            throw SFTPError(.failed, "sftp: \(fs.host): an SFTP reply to no request (id \(reply.id))")
        }
        guard case .status(_, 0) = reply else { throw fs.refusal(reply, "cannot write", job.partialPath) }
        guard !flights[k].acknowledged else {
            throw SFTPError(.failed, "sftp: \(fs.host): a second SFTP reply to one request (id \(reply.id))")
        }
        flights[k].acknowledged = true
        outstanding -= flights[k].count
        while front < flights.count, flights[front].acknowledged {
            let flight = flights[front]
            front += 1
            acknowledged += UInt64(flight.count)
            segments.moved(flight.count, from: flight.segment, observer: observer, display: job.display)
        }
        if front > 64, front * 2 > flights.count {
            flights.removeFirst(front)
            front = 0
        }
    }

    /// The server would not start another channel: the upload goes on with those it has (most
    /// often OpenSSH's MaxSessions). Anything else lost the connection.
    private func refused(_ error: SFTPError) throws(SFTPError) {
        state = .done
        guard error.kind == .refused else { throw error }
        fs.debug("\(job.remotePath.shown): no further SFTP channel (\(fs.lastErrorReason)); going on with the channels open")
        fs.channels?.refuse()
    }

    /// After the lane left a packet half sent and the upload stopped: makes the same call again
    /// until the packet is out (without blocking; nothing else may be sent first). False when
    /// that could not be done.
    func finishPacket(halfSent: () -> Bool) -> Bool {
        var stall = WriteStall()
        while halfSent() {
            let moved: Bool
            switch state {
            case .opensChannel:
                let channel = SFTPPipe.openChannel(fs.session)
                if let channel {
                    state = .startsSubsystem(channel, begun: false)
                } else if libssh2_session_last_errno(fs.session) != LIBSSH2_ERROR_EAGAIN {
                    state = .done
                }
                moved = channel != nil
            case .startsSubsystem(let channel, _):
                // Done or failed, the channel is freed by `end`.
                moved = SFTPPipe.startSubsystem(channel) != LIBSSH2_ERROR_EAGAIN
            case .opensFile(let pipe, _), .writing(let pipe, _), .closing(let pipe, _):
                guard let (_, exchanged) = try? pipe.pump(fs) else { return false }
                moved = exchanged
            case .waitsForChannel, .kept, .done:
                return !halfSent()
            }
            if moved { stall.progressed() } else if (try? stall.wait(fs, job.partialPath, what: "cannot write")) == nil { return false }
        }
        return true
    }

    /// After a lost connection, or one left with a packet half sent, where any call would wait
    /// for the session's timeout: the channels go with the session, unfreed.
    func abandon() {
        switch state {
        case .kept(let pipe), .opensFile(let pipe, _), .writing(let pipe, _), .closing(let pipe, _):
            fs.channels?.forget(pipe)
        default:
            break
        }
        refusedChannel = nil
        state = .done
    }

    /// Ends the lane in blocking mode, after the upload (a refused channel is freed) or after a
    /// stop (its channel is shut whatever it holds: closing a channel is the SSH connection's
    /// message, outside the SFTP stream, and the server ends its sftp-server with it).
    func end() {
        if let refusedChannel { libssh2_channel_free(refusedChannel) }
        refusedChannel = nil
        switch state {
        case .opensChannel:
            // In blocking mode the same call finishes what it began.
            if let channel = SFTPPipe.openChannel(fs.session) {
                libssh2_channel_free(channel)
            }
        case .startsSubsystem(let channel, _):
            libssh2_channel_free(channel)
        case .kept(let pipe):
            fs.channels?.giveBack(pipe)
        case .opensFile(let pipe, _), .writing(let pipe, _), .closing(let pipe, _):
            if let channels = fs.channels { channels.discard(pipe) } else { pipe.free() }
        case .waitsForChannel, .done:
            break
        }
        state = .done
    }
}
