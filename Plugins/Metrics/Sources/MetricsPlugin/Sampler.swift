import CTermhost
import Foundation
import Glibc
import MetricsCore
import Synchronization
import TermhostSDK

/// One host's sampler: a thread that owns the host's SSH connection and its one long-lived
/// exec channel running SamplerScript, parses frames as they arrive and keeps the HostReport
/// (state, sections, five minutes of history) that every output reads.
///
/// Control (pause, sleep, details, stop) is a few flags under a lock plus a wake pipe the
/// thread polls beside the channel, so a change takes effect at once, not at the next sample.
/// The thread holds no credentials: the SSH plugin authenticates inside open(); closing the
/// connection (pause, sleep, removal, shutdown) is what drops that session from memory.
final class Sampler: @unchecked Sendable {
    struct Config: Sendable, Equatable {
        var interval = 1
        /// Explicit interface selection; nil shows the physical ones.
        var interfaces: [String]? = nil
    }

    let host: String
    let config: Config
    private let transport: SSHTransport
    /// Where trust and password prompts go (0: none, fail closed).
    private let scene: UInt64
    /// For a tool: saved hosts only and never a prompt (the transport's open_saved).
    private let unattended: Bool

    private struct Control {
        var paused = false, sleeping = false, stopped = false, retryNow = false
        /// The host's saved route changed: the connection in use closes and a new one opens.
        var reconnect = false
        var detailObservers = 0
        /// Set by start() (under the lock: start and stop run on different threads).
        var started = false
        var report: HostReport

        /// What the thread acts on; a change that leaves this equal does not wake it.
        var relevant: [Bool] { [paused, sleeping, stopped, retryNow, reconnect, detailObservers > 0] }
    }
    private let control: Mutex<Control>
    /// The wake channel: a socketpair made close-on-exec and non-blocking atomically (like
    /// pipe2(O_CLOEXEC | O_NONBLOCK), which Glibc's Swift module does not export), so no
    /// child of another thread inherits it. -1 when that failed: then the thread notices
    /// changes by polling every second instead. Closed in deinit only: as long as anyone can
    /// call change(), the descriptors are this sampler's and no other file's.
    private let wake: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)

    /// Retry delays after a retryable failure (NOTES §8's recovery steps).
    static let backoff: [Double] = [1, 2, 5, 10, 30]

    init(host: String, config: Config, transport: SSHTransport, scene: UInt64, paused: Bool, unattended: Bool = false) {
        self.host = host
        self.config = config
        self.transport = transport
        self.scene = scene
        self.unattended = unattended
        var report = HostReport(host: host, state: paused ? .paused : .connecting, interval: Double(config.interval))
        report.state = paused ? .paused : .connecting
        control = Mutex(Control(paused: paused, report: report))
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        wake = socketpair(AF_UNIX, type, 0, &fds) == 0 ? (fds[0], fds[1]) : (-1, -1)
    }

    deinit {
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Starts the thread (once). The thread holds the sampler until it ends.
    func start() {
        guard control.withLock({ c -> Bool in defer { c.started = true }; return !c.started }) else { return }
        let t = Thread { [self] in run(); finished.signal() }
        t.name = "metrics \(host)"
        t.start()
    }

    // MARK: control, from any thread

    var report: HostReport { control.withLock { $0.report } }

    /// Only a change of the flag does anything: calling it with the current value (as every
    /// store sync does) neither wakes the thread nor cuts a failed monitor's wait short.
    func setPaused(_ on: Bool) { change { if $0.paused != on { $0.paused = on; if !on { $0.retryNow = true } } } }
    func setSleeping(_ on: Bool) { change { if $0.sleeping != on { $0.sleeping = on; if !on { $0.retryNow = true } } } }
    /// The user acted (`metrics resume`): a failed monitor tries again now, even after
    /// "auth needed" or "host key changed".
    func retry() { change { $0.retryNow = true } }
    /// Another device changed the host's route (MetricsSync.swift): the connection in use
    /// closes and the next one reads the new saved host, at once, even from a failed wait.
    func reconnect() { change { $0.reconnect = true; $0.retryNow = true } }
    /// Details (processes, filesystems) are collected while at least one observer wants them.
    func observeDetails(_ on: Bool) { change { $0.detailObservers = max(0, $0.detailObservers + (on ? 1 : -1)) } }

    /// Ends the thread and waits for it (bounded: the SSH plugin's close is bounded too).
    func stop(wait seconds: Double = 3) {
        requestStop()
        if control.withLock({ $0.started }) { _ = finished.wait(timeout: .now() + seconds) }
    }

    /// Asks the thread to end without waiting (so many samplers stop in parallel).
    func requestStop() { change { $0.stopped = true } }

    /// Waits until the report satisfies test, or the deadline; returns the last report.
    func wait(timeout: Double, until test: (HostReport) -> Bool) -> HostReport {
        let deadline = Date().addingTimeInterval(timeout)
        var r = report
        while !test(r) && Date() < deadline { usleep(50_000); r = report }
        return r
    }

    /// Applies body; wakes the thread only when something it acts on changed.
    private func change(_ body: (inout Control) -> Void) {
        let changed = control.withLock { c -> Bool in
            let before = c.relevant
            body(&c)
            return c.relevant != before
        }
        guard changed, wake.write >= 0 else { return }
        var b: UInt8 = 1
        _ = Glibc.write(wake.write, &b, 1)
    }

    private func setState(_ s: MonitorState) { control.withLock { $0.report.state = s } }

    // MARK: the thread

    private enum Outcome { case control, failed(MonitorState.Failure) }

    private func run() {
        var attempt = 0
        while true {
            let c = control.withLock { c -> Control in var copy = c; c.retryNow = false; c.reconnect = false; copy.report = c.report; return copy }
            if c.stopped { break }
            if c.paused || c.sleeping {
                setState(c.paused ? .paused : .sleeping)
                waitForChange(nil) { $0.stopped || $0.paused != c.paused || $0.sleeping != c.sleeping || $0.retryNow }
                continue
            }
            setState(.connecting)
            let outcome: Outcome
            do throws(PluginError) {
                let connection = try unattended ? transport.openSaved(host, shared: true) : transport.open(host, scene: scene, shared: true)
                outcome = sample(on: connection, resetAttempts: { attempt = 0 })
                connection.close()
            } catch {
                outcome = .failed(FailureText.open(denied: error.code == Int32(TERMHOST_ERR_DENIED), message: error.message,
                                                   host: host, code: error.code))
            }
            guard case .failed(let f) = outcome else { continue }
            if control.withLock({ $0.stopped || $0.paused || $0.sleeping }) { continue }
            setState(.failed(f))
            // Auth and trust failures wait for the user (resume); the others retry after
            // 1, 2, 5, 10, then every 30 s. Only stop, pause, sleep or a retry request end
            // the wait early: other wakes (details observers, repeated syncs) do not.
            waitForChange(f.retryable ? Sampler.backoff[min(attempt, Sampler.backoff.count - 1)] : nil) {
                $0.stopped || $0.paused || $0.sleeping || $0.retryNow
            }
            attempt += 1
        }
        setState(.paused)
    }

    /// Blocks until `done` holds for the control state (checked on every wake, and at least
    /// every second), or the timeout in seconds.
    private func waitForChange(_ timeout: Double?, until done: (Control) -> Bool) {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while !control.withLock({ done($0) }) {
            var slice: Int32 = 1000
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return }
                slice = Int32(min(1000, max(1, (left * 1000).rounded(.up))))
            }
            var pfd = pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, slice)
            drainWake()
        }
    }

    private func drainWake() {
        guard wake.read >= 0 else { return }
        var buf = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wake.read, &buf, buf.count) > 0 {}
    }

    /// Runs the loop on one connection until a control change or a failure.
    private func sample(on connection: SSHTransport.Connection, resetAttempts: () -> Void) -> Outcome {
        var previous: RawSample? = nil
        while true {
            let details = control.withLock { $0.detailObservers > 0 }
            // A fresh nonce per run: remote text cannot forge this run's markers.
            let nonce = SamplerScript.newNonce()
            let command = SamplerScript.command(interval: config.interval, details: details, nonce: nonce)
            let fd: Int32
            do throws(PluginError) { fd = try connection.openExec(command) } catch { return .failed(FailureText.exec(message: error.message)) }
            if previous == nil { setState(.collecting) }
            let result = read(fd, nonce: nonce, details: details, previous: &previous, resetAttempts: resetAttempts)
            shutdown(fd, Int32(SHUT_WR))   // the remote loop ends on end-of-file
            close(fd)
            switch result {
            case .detailsChanged: continue
            case .control: return .control
            case .failed(let f): return .failed(f)
            }
        }
    }

    private enum ReadEnd { case control, detailsChanged, failed(MonitorState.Failure) }

    private func read(_ fd: Int32, nonce: String, details: Bool, previous: inout RawSample?, resetAttempts: () -> Void) -> ReadEnd {
        var parser = FrameParser(nonce: nonce)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var lastFrame = Date()
        let silence = max(3.0 * Double(config.interval), 10) + 5
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, 1000)
            // Checked on every pass, not only on a wake: without a wake pipe this is how a
            // change is seen (within a second).
            if fds[1].revents != 0 { drainWake() }
            let (halt, detailsNow) = control.withLock { ($0.stopped || $0.paused || $0.sleeping || $0.reconnect, $0.detailObservers > 0) }
            if halt { return .control }
            if detailsNow != details { return .detailsChanged }
            if fds[0].revents != 0 {
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n <= 0 {
                    if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                    return .failed(parser.sawHello
                        ? .unreachable("the sampling channel to \(host) closed")
                        : .commandFailed("the sampling loop on \(host) ended before its first sample"))
                }
                for raw in parser.feed(buffer[0..<n]) {
                    let snapshot = Compute.snapshot(previous: previous, current: raw, info: parser.info, interfaces: config.interfaces)
                    let hasRates = previous != nil
                    let now = Date().timeIntervalSince1970
                    control.withLock {
                        $0.report.apply(snapshot, at: now)
                        if !$0.paused && !$0.sleeping && !$0.stopped { $0.report.state = hasRates ? .live : .collecting }
                    }
                    previous = raw
                    lastFrame = Date()
                    resetAttempts()
                }
            }
            if Date().timeIntervalSince(lastFrame) > silence {
                return .failed(.unreachable("no sample from \(host) for \(Int(silence)) s"))
            }
        }
    }
}
