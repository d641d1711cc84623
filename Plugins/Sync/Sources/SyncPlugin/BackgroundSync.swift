import Foundation
import Synchronization
import SyncCore
import TermhostSDK

/// The Sync feature's loop in this process (SyncCore's SyncLoop) through the lifecycle: started
/// at activate with its first sync after `SyncInterval.firstDelay`, paused in background,
/// ended at expiry (a new one starts on foreground), stopped within `shutdownWait` at shutdown.
/// It also keeps this process's syncs one at a time: a sync command holds `gate` while it
/// runs, and the loop skips a sync it finds the gate held for.
final class BackgroundSync: @unchecked Sendable {
    /// How long shutdown waits for a sync in flight: half the host's shutdown bound (3 s, NOTES
    /// section 8, shared by every feature), so that the features shut down after this one
    /// (sessions, transfers, forwards) keep the other half. A sync abandoned then loses nothing.
    static let shutdownWait = 1.5
    /// How long a sync command waits for another process's sync of this device to finish.
    static let commandLockWait = 30.0

    let host: PluginHost
    let gate = NSLock()
    /// Every process's syncs of this device's store, one at a time (`DeviceSyncLock`).
    let deviceLock = DeviceSyncLock(path: BackendSettings.dataDirectory(ProcessInfo.processInfo.environment) + "/sync.lock")
    /// Held while a sync's report is printed and by `endWatch`, so that a `sync watch` never
    /// writes to its command's descriptors after it has ended.
    private let printing = NSLock()
    /// Seconds between syncs (nil: off), or why the setting was refused.
    let interval: Result<Int?, PluginError>

    private struct State {
        /// The loop the lifecycle drives now; nil while off or expired.
        var loop: SyncLoop?
        /// Every loop started, for shutdown to wait for (an expired one may still be syncing).
        var started: [SyncLoop] = []
        var foreground = true
        var ended = false
        /// Running `sync watch` commands: woken at shutdown, and told of every sync of every
        /// loop (one started after expiry too).
        var watchers: [DispatchSemaphore] = []
        var printers: [UInt64: @Sendable (SyncLoop.Report) -> Void] = [:]
        var nextPrinter: UInt64 = 1
    }
    private let state = Mutex(State())

    init(host: PluginHost) {
        self.host = host
        interval = Result { () throws(PluginError) in try SyncInterval.read(host) }
    }

    func activate() {
        switch interval {
        case .failure(let error):
            host.log(.error, "\(error.message); no sync in background until it is fixed")
        case .success(let seconds?):
            do { try state.withLock { try start(&$0, seconds: seconds, firstDelay: min(SyncInterval.firstDelay, seconds)) } } catch {
                // The sync commands say what is wrong (a bad TERMHOST_SYNC_CLOCK_OFFSET...) when used.
                host.log(.info, "no sync in background in this process: \(error)")
            }
        case .success(nil):
            break
        }
    }

    func background() {
        state.withLock {
            $0.foreground = false
            $0.loop?.setForeground(false)
        }
    }

    func foreground() {
        state.withLock { s in
            s.foreground = true
            if let loop = s.loop {
                loop.setForeground(true)
            } else if case .success(let seconds?) = interval, !s.ended {
                // Back from expiry: a new loop, syncing at once.
                try? start(&s, seconds: seconds, firstDelay: 0)
            }
        }
    }

    /// Expiry retires live work: the loop ends (a sync in flight finishes on its own; no new one
    /// starts, since the process is in background). Foreground starts a new one.
    func expire() {
        state.withLock {
            $0.loop?.stop(waitingAtMost: 0)
            $0.loop = nil
        }
    }

    func shutdown() {
        let (loops, watchers) = state.withLock { s in
            s.ended = true
            s.loop = nil
            defer { s.started = []; s.watchers = [] }
            return (s.started, s.watchers)
        }
        for watcher in watchers { watcher.signal() }
        for loop in loops { loop.stop(waitingAtMost: 0) }
        let deadline = Date().addingTimeInterval(BackgroundSync.shutdownWait)
        for loop in loops where !loop.stop(waitingAtMost: max(0, deadline.timeIntervalSinceNow)) {
            host.log(.warning, "a sync still running after \(BackgroundSync.shutdownWait) s was abandoned; its changes stay pending and the next sync sends them")
        }
    }

    /// Runs a sync command. Every one but `watch` (which drives the loop itself) holds `gate`;
    /// every one that may write the engine's state also holds the device's lock, waiting at most
    /// `commandLockWait` for another process's sync (`status` and `conflicts` only read).
    func running(_ command: CommandInvocation, _ body: () -> Int32) -> Int32 {
        let subcommand = (try? SyncCommand.spec.parse(command.arguments))?.arguments.first ?? "status"
        if subcommand == "watch" { return body() }
        gate.lock()
        defer { gate.unlock() }
        if subcommand == "status" || subcommand == "conflicts" { return body() }
        do {
            return try deviceLock.holding(waitingAtMost: BackgroundSync.commandLockWait, waiting: {
                command.printError("termhost sync: waiting for another termhost process's sync on this device to finish")
            }, body)
        } catch {
            command.printError("termhost sync: \(error)")
            return 1
        }
    }

    /// Starts watching for `sync watch`: `print` hears every sync until `endWatch`, and `done`
    /// is signalled at shutdown. The loop is this process's, or (interval off, or expired) a
    /// new one every `seconds`; it syncs at once either way. Returns its interval and a token.
    func watch(seconds: Int, done: DispatchSemaphore, print: @escaping @Sendable (SyncLoop.Report) -> Void) throws -> (interval: Double, token: UInt64) {
        try state.withLock { s in
            guard !s.ended else { throw PluginError("the process is shutting down") }
            if s.loop == nil { try start(&s, seconds: seconds, firstDelay: 0) }
            s.watchers.append(done)
            let token = s.nextPrinter
            s.nextPrinter += 1
            s.printers[token] = print
            s.loop!.syncSoon()
            return (s.loop!.interval, token)
        }
    }

    func endWatch(_ token: UInt64) {
        printing.withLock {
            state.withLock { _ = $0.printers.removeValue(forKey: token) }
        }
    }

    private func start(_ s: inout State, seconds: Int, firstDelay: Int) throws {
        let loop = SyncLoop(device: try device(), interval: Double(seconds), firstDelay: Double(firstDelay), gate: gate)
        if !s.foreground { loop.setForeground(false) }
        loop.addObserver { [weak self] report in
            guard let self else { return }
            printing.withLock {
                for print in state.withLock({ Array($0.printers.values) }) { print(report) }
            }
        }
        loop.start()
        s.loop = loop
        s.started.append(loop)
    }

    private func device() throws -> SyncLoop.Device {
        guard let store = host.store, let syncStore = host.syncStore, let secrets = host.secrets else {
            throw PluginError("the host store, its sync service (termhost.sync-store/1) or the secrets service is unavailable")
        }
        let environment = ProcessInfo.processInfo.environment
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return SyncLoop.Device(
            local: HostRecords(syncStore), state: PluginState(store), clock: try DisplayClock.make(environment),
            vault: { String(decoding: try encoder.encode(try BackendSettings.load(store, environment)), as: UTF8.self) },
            openBackend: { try BackendSettings.load(store, environment).open(secrets: secrets, environment: environment) }, lock: deviceLock)
    }
}
