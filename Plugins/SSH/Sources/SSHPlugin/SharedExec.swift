import Glibc
import TermhostSDK

/// `termhost exec` in the daemon when a live shared connection to its destination exists (a
/// forwarding rule's, a sampler's, an assistant call's: TransportLink): the command is one
/// more channel on it, driven in steps like the transport's exec (SteppedExec), with stdin
/// streamed from the client's descriptor and output written to the client's between steps.
/// A cancel (Ctrl-C, the client gone) closes this channel, SIGTERM first, never the
/// connection the others use.
extension TransportService {
    static func runExec(_ c: TransportConnection, command: String, environment: [RemoteEnvironment.Variable],
                        stdin: Int32, stdout: Int32, stderr: Int32, cancelled: () -> Bool) throws(SSHError) -> Int32 {
        ExecutorCheck.offExecutor(c.executor)
        let job = SteppedExec(connection: c.connection, executor: c.executor, command: command, input: nil)
        let started: SSHError? = onExecutor(c) {
            if let lost = c.bridges.lost { return SSHError(lost) }
            if c.closed { return SSHError("ssh: the connection to \(c.connection.shownAddress) was closed") }
            if let busy = c.bridges.openBusy { return SSHError(busy) }
            do throws(SSHError) { try job.start(environment: environment) } catch { return error }
            return nil
        }
        if let started { throw started }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: SteppedExec.quantum, alignment: 1)
        defer { buffer.deallocate() }
        // Read from stdin, waiting for the job to take it; -1 once stdin ended.
        var pending = 0
        var inputEnded = stdin < 0
        var wantsInput = false
        while true {
            if cancelled() {
                stop(c, job)
                throw SSHError("ssh: '\(VisibleText.of(command))' on \(c.connection.shownAddress) was cancelled")
            }
            let turn: Turn = onExecutor(c, opensChannel: false) {
                // Closed first: the last handle's close marks the connection lost too.
                if c.closed { return .closed }
                if let lost = c.bridges.lost { return .gone(lost) }
                if job.wantsInput {
                    if pending > 0 { job.feed(UnsafeRawBufferPointer(start: buffer, count: pending)); pending = 0 }
                    else if inputEnded { job.closeInput() }
                }
                do throws(SSHError) { return .step(try job.step(), wantsInput: job.wantsInput) } catch { return .failed(error) }
            }
            let step: SteppedExec.Step
            switch turn {
            case .gone(let reason):
                throw SSHError(reason)
            case .closed:
                // The plugin is shutting down: the command must not run on unseen.
                stop(c, job)
                throw SSHError("ssh: the connection to \(c.connection.shownAddress) was closed")
            case .failed(let error):
                onExecutor(c, opensChannel: false) { job.abandon() }
                throw error
            case .step(let s, let wants):
                step = s
                wantsInput = wants
            }
            for chunk in step.output {
                chunk.bytes.withUnsafeBytes { writeAll(chunk.stream == 0 ? stdout : stderr, $0) }
            }
            if job.finished { return job.status }
            let readStdin = wantsInput && pending == 0 && !inputEnded
            if step.progressed && !readStdin { continue }
            // Wait for the server, or for stdin when the job has room for it; at most
            // `stepWait` ms, so a cancel is seen soon even while nothing arrives.
            var fds = [pollfd(fd: c.connection.socket, events: Int16(POLLIN), revents: 0)]
            if readStdin { fds.append(pollfd(fd: stdin, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&fds, nfds_t(fds.count), step.progressed ? 0 : stepWait)
            if readStdin && fds[1].revents != 0 {
                let n = read(stdin, buffer, SteppedExec.quantum)
                if n > 0 { pending = n } else if n == 0 || (errno != EINTR && errno != EAGAIN) { inputEnded = true }
            } else if fds[0].revents != 0 {
                // The socket may stay readable while the executor's pass loop has not read it.
                sched_yield()
            }
        }
    }

    /// What one turn on the executor found.
    private enum Turn {
        case step(SteppedExec.Step, wantsInput: Bool)
        case failed(SSHError)
        /// The connection was lost, with the reason.
        case gone(String)
        /// This handle was closed (the feature's shutdown).
        case closed
    }

    /// Writes all of bytes to fd (a client's descriptor, blocking); a closed reader ends the
    /// writing quietly, as ssh's output to a closed pipe does.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}
