import CLibSSH2
import LibSSH2
import CTermhost
import Foundation
import Glibc
import TermhostSDK

/// The transport's exec (and exec_bounded, transport.h): one exec channel driven in short,
/// non-blocking steps, each a separate turn on the connection's executor. Between steps the
/// executor is free, so bridges, splices and other exec calls on the same connection move
/// while a long command runs, and the calling thread checks its deadline and cancel flag.
///
/// The rule that makes steps safe to interleave (libssh2 1.10, HalfSentPacket): a step never
/// ends with a packet half sent. A call that leaves one is repeated with the same arguments
/// until the packet has gone (bounded), before anything else may use the session.
final class SteppedExec {
    let connection: SSHConnection
    /// The connection's executor, for the debug checks of [executor].
    let executor: DispatchQueue
    let command: String
    private var channel: OpaquePointer?
    /// stdin, copied once: a write repeated after EAGAIN must pass the same pointer. A
    /// streamed input (`feed`) refills it only once all of it went out.
    private let input: UnsafeMutableRawPointer
    private var inputSize: Int
    private var inputOffset = 0
    /// No more input will come (always, for input given whole to init).
    private var inputClosed = true
    private var eofSent = false
    private var remoteEOF = false
    private var remoteClosed = false
    /// The early close's SIGTERM went out (or could not be sent).
    private var signalled = false
    /// Set once the channel is closed (or given up): the job is over.
    private(set) var finished = false
    /// The remote exit status once finished normally.
    private(set) var status: Int32 = 0
    /// The signal that killed the remote command (its name, shown safe), when one did.
    private(set) var signal: String?

    /// Bytes read per stream per step: enough for bulk output, small enough that a step is a
    /// short turn on the executor.
    static let quantum = 256 * 1024
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: SteppedExec.quantum, alignment: 1)

    /// `input`: all of stdin, sent then closed; or nil for a stream the caller `feed`s and
    /// ends with `closeInput`.
    init(connection: SSHConnection, executor: DispatchQueue, command: String, input: [UInt8]?) {
        self.connection = connection
        self.executor = executor
        self.command = command
        inputSize = input?.count ?? 0
        inputClosed = input != nil
        self.input = .allocate(byteCount: max(input?.count ?? SteppedExec.quantum, 1), alignment: 1)
        input?.withUnsafeBytes { if !$0.isEmpty { self.input.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
    }

    /// Whether a streamed input has room for the next chunk: the last one went out. [executor]
    var wantsInput: Bool { !inputClosed && inputOffset == inputSize }

    /// The next chunk of a streamed input, at most `quantum` bytes, when `wantsInput`. [executor]
    func feed(_ bytes: UnsafeRawBufferPointer) {
        ExecutorCheck.onExecutor(executor)
        precondition(wantsInput && bytes.count <= SteppedExec.quantum)
        if let base = bytes.baseAddress, !bytes.isEmpty { input.copyMemory(from: base, byteCount: bytes.count) }
        inputOffset = 0
        inputSize = bytes.count
    }

    /// A streamed input ended: end-of-file follows its last bytes. [executor]
    func closeInput() {
        ExecutorCheck.onExecutor(executor)
        inputClosed = true
    }

    deinit {
        input.deallocate()
        buffer.deallocate()
    }

    /// What one step produced: output in arrival order (stream 0 stdout, 1 stderr), and
    /// whether anything moved (if not, the caller waits for the socket before the next step).
    struct Step {
        var output: [(stream: Int32, bytes: [UInt8])] = []
        var progressed = false
    }

    /// Opens the channel, sends `environment` (SendEnv, SetEnv) and starts the command
    /// (blocking mode: short requests and replies). [executor]
    func start(environment: [RemoteEnvironment.Variable] = []) throws(SSHError) {
        ExecutorCheck.onExecutor(executor)
        let channel = try connection.openSessionChannel()
        do { _ = try RemoteEnvironment.send(environment, on: channel, connection: connection) } catch {
            libssh2_channel_free(channel)
            throw error
        }
        guard libssh2_channel_process_startup(channel, "exec", 4, command, UInt32(command.utf8.count)) == 0 else {
            let reason = connection.lastError()
            libssh2_channel_free(channel)
            throw SSHError("ssh: the server refused to run the command: \(reason)")
        }
        self.channel = channel
    }

    /// Runs call, repeating it while it leaves a packet half sent (HalfSentPacket, bounded).
    /// [executor, non-blocking]
    private func finishing(_ call: () -> Int) throws(SSHError) -> Int {
        ExecutorCheck.onExecutor(executor)
        let session = connection.session
        var rc = call()
        guard LibSSH2.wouldBlock(rc) && HalfSentPacket.isLeft(in: session) else { return rc }
        let gone = HalfSentPacket.finish(socket: connection.socket, by: time(nil) + HalfSentPacket.bound) {
            rc = call()
            return !(LibSSH2.wouldBlock(rc) && HalfSentPacket.isLeft(in: session))
        }
        guard gone else {
            throw SSHError("Connection to \(connection.shownAddress) closed: the server took no data for \(HalfSentPacket.bound) s")
        }
        return rc
    }

    private func broken() -> SSHError {
        SSHError("Connection to \(connection.shownAddress) closed: \(connection.lastError())")
    }

    /// Moves what can move now without waiting. [executor]
    func step() throws(SSHError) -> Step {
        ExecutorCheck.onExecutor(executor)
        var result = Step()
        guard let channel, !finished else { return result }
        let session = connection.session
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }
        // Both streams every step until the server's EOF: libssh2 keeps what other calls read
        // for this channel.
        for stream in [Int32(0), Int32(1)] where !remoteEOF {
            var taken = 0
            while taken < SteppedExec.quantum {
                let n = try finishing { libssh2_channel_read_ex(channel, stream, buffer.assumingMemoryBound(to: CChar.self), SteppedExec.quantum) }
                if n > 0 {
                    result.output.append((stream, Array(UnsafeRawBufferPointer(start: buffer, count: n))))
                    taken += n
                    result.progressed = true
                    continue
                }
                if n == 0 || LibSSH2.wouldBlock(n) { break }
                throw broken()
            }
        }
        if !remoteEOF && libssh2_channel_eof(channel) != 0 { remoteEOF = true; result.progressed = true }
        // stdin, up to a quantum a step; the window closing (EAGAIN, nothing half sent) waits.
        var sent = 0
        while inputOffset < inputSize && sent < SteppedExec.quantum {
            let n = try finishing { libssh2_channel_write_ex(channel, 0, (input + inputOffset).assumingMemoryBound(to: CChar.self), inputSize - inputOffset) }
            if n > 0 { inputOffset += n; sent += n; result.progressed = true; continue }
            if LibSSH2.wouldBlock(n) { break }
            throw broken()
        }
        if inputClosed && inputOffset == inputSize && !eofSent {
            let rc = try finishing { Int(libssh2_channel_send_eof(channel)) }
            if !LibSSH2.wouldBlock(rc) { eofSent = true; result.progressed = true }
        }
        if remoteEOF { try close(channel, &result) }
        try connection.checkAlive(mayWrite: true)
        return result
    }

    /// Drained: waits (EAGAIN) for the server's close, which follows its exit status (a server
    /// may send EOF long before it: ExitStatus), then closes ours. [executor, non-blocking]
    private func close(_ channel: OpaquePointer, _ result: inout Step) throws(SSHError) {
        ExecutorCheck.onExecutor(executor)
        if !remoteClosed {
            let rc = try finishing { Int(libssh2_channel_wait_closed(channel)) }
            if LibSSH2.wouldBlock(rc) { return }
            guard rc == 0 else { throw broken() }
            remoteClosed = true
        }
        let rc = try finishing { Int(libssh2_channel_close(channel)) }
        guard !LibSSH2.wouldBlock(rc) else { return }
        let ended = ExitStatus.of(channel)
        status = ended.status
        signal = ended.signal
        if let message = ended.message { result.output.append((1, Array(message.utf8))) }
        free(channel)
        result.progressed = true
    }

    /// Closes the channel early (deadline or cancel): the command is sent SIGTERM first
    /// (ChannelSignal: closing alone ends only its pipes, and `sleep 30` would run on), then the
    /// server sees the close. Call until `finished`; each call waits for nothing. [executor]
    func abort() {
        ExecutorCheck.onExecutor(executor)
        guard let channel, !finished else { return }
        let session = connection.session
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }
        if !signalled {
            let sent = (try? finishing { Int(ChannelSignal.send(channel, "TERM")) }) ?? 0
            if LibSSH2.wouldBlock(sent) { return }   // nothing half sent: the next call tries again
            signalled = true
        }
        let rc = (try? finishing { Int(libssh2_channel_close(channel)) }) ?? Int(LIBSSH2_ERROR_SOCKET_SEND)
        if !LibSSH2.wouldBlock(rc) { free(channel) }
    }

    /// Gives up on a close the server never confirmed: the channel is left to the session's
    /// teardown (freeing it now would wait for that confirmation again). [executor]
    func abandon() {
        ExecutorCheck.onExecutor(executor)
        channel = nil
        finished = true
    }

    private func free(_ channel: OpaquePointer) {
        // The close is done (local and remote): libssh2 frees without another round trip.
        libssh2_channel_free(channel)
        self.channel = nil
        finished = true
    }
}
