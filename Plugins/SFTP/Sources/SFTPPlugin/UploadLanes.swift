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
/// Lane 0 writes through the handle the upload created on the connection's first channel;
/// the others open a channel each (kept in ExtraChannels for later files; libssh2 opens one at
/// a time per session, so they come up one after another while lane 0 already writes), open
/// the partial file on it and take segments in order as they come free, so a lane that started
/// late takes fewer.
///
/// libssh2's rule for a call that returned EAGAIN with a packet half sent (the socket full):
/// that packet must go out before any other on the session, and only a call on the same
/// channel sends it; any other call returns EAGAIN for ever (transport.c, send_existing). So
/// after such a call its lane alone runs until the packet is out, and a stop sends it out
/// before the session is used again. Runs on the session's executor, like RemoteFS.
final class UploadLanes {
    private enum State {
        /// Waits for its turn to open a channel.
        case wantsChannel
        /// libssh2_sftp_init's turn (one lane at a time: `starter`); begun once it was called.
        case startingChannel(begun: Bool)
        /// Opening the partial file on its channel, for this segment; begun once it was asked.
        case opening(RemoteFS, segment: Int, begun: Bool)
        case writing(UploadStream, ownsHandle: Bool)
        /// Closing its handle, then giving its channel back.
        case closing(UploadStream)
        case done
    }

    private let fs: RemoteFS
    private let segments: Segments
    private let fd: Int32
    private let job: FileJob
    private let request: Int
    private let observer: TransferObserver
    private var states: [State]
    /// Segments no lane has taken yet, in order.
    private var waiting: ArraySlice<Int>
    private var starter: Int?
    /// The lane whose call left a packet half sent: it alone runs until the packet is out.
    private var owner: Int?
    /// Bytes the server acknowledged, over every lane.
    private var acknowledged: UInt64 = 0
    /// The lane whose call failed: after libssh2's sftp_write fails, it has dropped its
    /// requests, so the same bytes passed again would go to other offsets.
    private var failedLane: Int?

    /// Whether the last call left a packet half sent (RemoteFS.packetHalfSent).
    private var halfSent: Bool { fs.packetHalfSent }
    /// For the debug line that says when each further channel began to write.
    private let began = ContinuousClock.now

    /// `parts` are this connection's segments; `handle` is open on fs's channel at the first
    /// one's start. Up to `channels` lanes, no more than there are segments.
    init(fs: RemoteFS, handle: OpaquePointer, parts: [Int], channels: Int, segments: Segments, fd: Int32, job: FileJob,
         request: Int, observer: TransferObserver) {
        self.fs = fs
        self.segments = segments
        self.fd = fd
        self.job = job
        self.request = request
        self.observer = observer
        waiting = parts[...]
        let first = waiting.removeFirst()
        states = [.writing(UploadStream(fs: fs, handle: handle, fd: fd, range: segments.ranges[first], isLast: segments.isLast(first),
                                        request: request, localPath: job.localPath, partialPath: job.partialPath), ownsHandle: false)]
        for _ in 1..<max(1, min(channels, parts.count)) {
            guard let extra = fs.channels else { break }
            if let kept = extra.take(), let segment = waiting.popFirst() {
                states.append(.opening(fs.on(kept), segment: segment, begun: false))
            } else if !extra.refused {
                states.append(.wantsChannel)
            }
        }
    }

    /// Moves every segment; returns the bytes the server acknowledged. On a stop or a failure
    /// the lanes are settled (unless the connection is lost) and the error is passed on; one
    /// that leaves the session unusable (a packet still half sent) is passed on as a lost
    /// connection, so that nothing else waits on it.
    func run() throws(SFTPError) -> UInt64 {
        libssh2_session_set_blocking(fs.session, 0)
        defer { libssh2_session_set_blocking(fs.session, 1) }
        var stall = WriteStall()
        do throws(SFTPError) {
            while states.contains(where: { if case .done = $0 { false } else { true } }) {
                try segments.check(job.display)
                var progressed = false
                for i in owner.map({ [$0] }) ?? Array(states.indices) {
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
                if progressed { stall.progressed() } else { try stall.wait(fs, job.partialPath, what: "cannot write") }
            }
        } catch {
            if error.kind != .connectionLost, !settle() {
                throw SFTPError(.connectionLost, "\(error.message); the connection to \(fs.host) is left unusable (a packet half sent)")
            }
            throw error
        }
        return acknowledged
    }

    /// One call for lane i; true when it moved bytes or changed state.
    private func step(_ i: Int) throws(SFTPError) -> Bool {
        switch states[i] {
        case .wantsChannel:
            guard starter == nil else { return false }
            guard fs.channels?.refused == false, !waiting.isEmpty else {
                states[i] = .done
                return true
            }
            starter = i
            states[i] = .startingChannel(begun: false)
            return true
        case .startingChannel:
            guard let sftp = libssh2_sftp_init(fs.session) else {
                if libssh2_session_last_errno(fs.session) == LIBSSH2_ERROR_EAGAIN {
                    states[i] = .startingChannel(begun: true)
                    return false
                }
                // Most often OpenSSH's MaxSessions: the upload goes on with the channels it has.
                fs.debug("\(job.remotePath.shown): no further SFTP channel (\(LibSSH2.lastError(fs.session))); going on with \(states.count - 1)")
                fs.channels?.refuse()
                starter = nil
                states[i] = .done
                return true
            }
            starter = nil
            fs.channels?.opened(sftp)
            let channel = fs.on(sftp)
            WriteRequests.use(request, on: channel)
            if let segment = waiting.popFirst() {
                states[i] = .opening(channel, segment: segment, begun: false)
            } else {
                fs.channels?.giveBack(sftp)
                states[i] = .done
            }
            return true
        case .opening(let channel, let segment, _):
            let path = job.partialPath
            guard let handle = libssh2_sftp_open_ex(channel.sftp, path, UInt32(path.utf8.count), UInt(LIBSSH2_FXF_WRITE), 0, LIBSSH2_SFTP_OPENFILE) else {
                if libssh2_session_last_errno(fs.session) == LIBSSH2_ERROR_EAGAIN {
                    states[i] = .opening(channel, segment: segment, begun: true)
                    return false
                }
                // The channel itself is fine: a later upload may use it.
                fs.channels?.giveBack(channel.sftp)
                states[i] = .done
                throw channel.error(path, "cannot open")
            }
            let range = segments.ranges[segment]
            libssh2_sftp_seek64(handle, range.lowerBound)
            let after = (ContinuousClock.now - began).components
            fs.debug("\(job.remotePath.shown): channel \(i + 1) of the upload writes from \(after.seconds * 1000 + after.attoseconds / 1_000_000_000_000_000) ms")
            states[i] = .writing(UploadStream(fs: channel, handle: handle, fd: fd, range: range, isLast: segments.isLast(segment),
                                              request: request, localPath: job.localPath, partialPath: path), ownsHandle: true)
            return true
        case .writing(let stream, let ownsHandle):
            switch try stream.step() {
            case .moved(let n):
                acknowledged += UInt64(n)
                segments.moved(n, from: stream.start, observer: observer, display: job.display)
                return true
            case .blocked:
                return false
            case .finished:
                if let segment = waiting.popFirst() {
                    stream.restart(at: segments.ranges[segment], isLast: segments.isLast(segment))
                } else {
                    states[i] = ownsHandle ? .closing(stream) : .done
                }
                return true
            }
        case .closing(let stream):
            let rc = libssh2_sftp_close_handle(stream.handle)
            if rc == LIBSSH2_ERROR_EAGAIN { return false }
            guard rc == 0 else { throw stream.fs.error(job.partialPath, "cannot close") }
            fs.channels?.giveBack(stream.fs.sftp)
            states[i] = .done
            return true
        case .done:
            return false
        }
    }

    /// After a stop or a failure (the connection still up), in blocking mode. Returns whether
    /// the session is usable afterwards.
    ///
    /// First the call that left a packet half sent is made again (the same call, the same
    /// bytes), or nothing else may be sent. Then the first channel's requests are finished:
    /// libssh2 may have sent part of an SFTP request when the window filled, and any other
    /// request on that channel (the close, the removal of the partial) would land inside it,
    /// where the server reads it as data and answers nothing. The same bytes are passed again
    /// until every one is acknowledged (at most a window, a round trip or two) or the server
    /// refuses them; not after that lane's own write failed, when libssh2 has dropped its
    /// requests. A further channel with nothing in flight is closed and kept for later files;
    /// one with bytes in flight is shut (closing a channel is the SSH connection's message,
    /// outside the SFTP stream, and the server ends its sftp-server with it). A call a lane
    /// began (its SFTP start, its open) is finished first: libssh2 keeps that state in the
    /// session. Bytes acknowledged here count toward the checkpoint (Segments), never paced.
    private func settle() -> Bool {
        libssh2_session_set_blocking(fs.session, 1)
        defer { owner = nil; starter = nil }
        if let i = owner {
            switch states[i] {
            case .writing(let stream, _):
                drain(stream) { halfSent }
            default:
                // In blocking mode the same call finishes what it began.
                finish(i)
            }
        }
        // A packet still half sent: any other call would wait for the session's timeout.
        guard !halfSent else { return false }
        if failedLane != 0, case .writing(let first, _) = states[0] { drain(first) { first.unacknowledged > 0 } }
        for i in states.indices.dropFirst() { finish(i) }
        return !halfSent
    }

    /// Passes a lane's unacknowledged bytes again while `more` says so, until the server
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

    /// Ends lane i's work after a stop, in blocking mode (settle).
    private func finish(_ i: Int) {
        switch states[i] {
        case .startingChannel(true):
            if let sftp = libssh2_sftp_init(fs.session) {
                fs.channels?.opened(sftp)
                fs.channels?.giveBack(sftp)
            }
        case .opening(let channel, _, let begun):
            let path = job.partialPath
            if begun, let handle = libssh2_sftp_open_ex(channel.sftp, path, UInt32(path.utf8.count), UInt(LIBSSH2_FXF_WRITE), 0, LIBSSH2_SFTP_OPENFILE) {
                libssh2_sftp_close_handle(handle)
            }
            fs.channels?.giveBack(channel.sftp)
        case .writing(let stream, true) where stream.unacknowledged == 0 && failedLane != i, .closing(let stream):
            if libssh2_sftp_close_handle(stream.handle) == 0 { fs.channels?.giveBack(stream.fs.sftp) } else { fs.channels?.discard(stream.fs.sftp) }
        case .writing(let stream, true):
            fs.channels?.discard(stream.fs.sftp)
        case .writing(_, false), .wantsChannel, .startingChannel(false), .done:
            break
        }
        states[i] = .done
    }
}
