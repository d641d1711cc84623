import CLibSSH2
import CTermhost
import Foundation
import Glibc
import TermhostSDK

/// exec and exec_bounded of the transport service: a SteppedExec driven from the calling
/// thread. Each step is a short turn on the connection's executor; between steps the caller
/// delivers the output (on its own thread, so a sink may call the service), checks the
/// deadline and the cancel flag, and waits for the socket (at most `poll` ms, so a cancel is
/// seen within that time even while nothing arrives).
extension TransportService {
    /// The longest deadline exec_bounded takes: one day, in ms (transport.h).
    static let deadlineRange: ClosedRange<Int> = 0...86_400_000
    /// Upper bound on the wait between steps, ms: how late a cancel or a deadline can be seen.
    static let stepWait: Int32 = 50
    /// How long an early close may wait for the server's confirmation, s.
    static let abortBound = 2.0

    struct ExecOutcome {
        var status: termhost_status
        var exitStatus: Int32 = 0
        /// The signal that killed the remote command, by name.
        var signal: String? = nil
    }

    static func runExec(_ c: TransportConnection, command: String, input: [UInt8], deadlineMS: UInt32, cancel: UnsafePointer<Int32>?,
                        output: (Int32, UnsafeRawBufferPointer) -> Void, err: UnsafeMutablePointer<termhost_error_t>?) -> ExecOutcome {
        ExecutorCheck.offExecutor(c.executor)
        let shown = "'\(VisibleText.of(command))' on \(c.connection.shownAddress)"
        do {
            _ = try BoundedNumber.check(Int(deadlineMS), name: "exec_bounded's deadline_ms", in: deadlineRange, unit: "ms")
        } catch {
            return ExecOutcome(status: termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, error.description))
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let limit: UInt64? = deadlineMS == 0 ? nil : started &+ UInt64(deadlineMS) &* 1_000_000
        let job = SteppedExec(connection: c.connection, executor: c.executor, command: command, input: input)
        let opened: termhost_status? = onExecutor(c) {
            if let s = closedStatus(c, err) { return s }
            if let s = lostStatus(c, err) { return s }
            if let s = busyStatus(c, err) { return s }
            do throws(SSHError) { try job.start() } catch {
                return termhostFail(err, TERMHOST_ERR_IO, error.message)
            }
            return nil
        }
        if let opened { return ExecOutcome(status: opened) }
        while true {
            if termhost_ssh_cancel_requested(cancel) != 0 {
                stop(c, job)
                return ExecOutcome(status: termhostFail(err, TERMHOST_ERR_CANCELLED, "ssh: \(shown) was cancelled; its channel was closed"))
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if let limit, now >= limit {
                stop(c, job)
                return ExecOutcome(status: termhostFail(err, TERMHOST_ERR_TIMEOUT,
                                                "ssh: \(shown) did not finish within \(deadlineMS) ms; its channel was closed"))
            }
            // Read on the executor: the reason the connection was lost, or this handle closed.
            var lost: String?
            let step: Result<SteppedExec.Step, SSHError>? = onExecutor(c, opensChannel: false) {
                // Closed first: the last handle's close marks the connection lost too, and a
                // closed handle is TERMHOST_ERR_NOT_FOUND (transport.h).
                if c.closed { return nil }
                lost = c.bridges.lost
                if lost != nil { return nil }
                do throws(SSHError) { return .success(try job.step()) } catch { return .failure(error) }
            }
            guard let step else {
                if let lost { return ExecOutcome(status: termhostFail(err, TERMHOST_ERR_IO, lost)) }
                // This handle closed under the call; on a connection other handles still use,
                // the command must not run on unseen.
                stop(c, job)
                return ExecOutcome(status: closed(err))
            }
            switch step {
            case .failure(let error):
                onExecutor(c, opensChannel: false) { job.abandon() }
                return ExecOutcome(status: termhostFail(err, TERMHOST_ERR_IO, error.message))
            case .success(let s):
                for chunk in s.output { chunk.bytes.withUnsafeBytes { output(chunk.stream, $0) } }
                if job.finished { return ExecOutcome(status: Int32(TERMHOST_OK), exitStatus: job.status, signal: job.signal) }
                if !s.progressed {
                    // Wait for the server, or the next look at the flag and the clock.
                    var wait = stepWait
                    if let limit { wait = Int32(min(UInt64(stepWait), (limit &- min(limit, now)) / 1_000_000 + 1)) }
                    var p = pollfd(fd: c.connection.socket, events: Int16(POLLIN), revents: 0)
                    _ = poll(&p, 1, wait)
                    // The socket may stay readable while the executor's pass loop has not yet
                    // read it: yield instead of spinning on it.
                    if p.revents != 0 { sched_yield() }
                }
            }
        }
    }

    /// Closes the job's channel early and waits (bounded) for the server to confirm, each try a
    /// turn of its own on the executor.
    static func stop(_ c: TransportConnection, _ job: SteppedExec) {
        let until = Date().addingTimeInterval(abortBound)
        while true {
            let done: Bool = onExecutor(c, opensChannel: false) {
                if c.bridges.lost != nil { job.abandon() } else { job.abort() }
                return job.finished
            }
            if done { return }
            if Date() >= until {
                onExecutor(c, opensChannel: false) { job.abandon() }
                return
            }
            var p = pollfd(fd: c.connection.socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, stepWait)
        }
    }
}
