import Foundation
import SyncCore
import TermhostSDK

/// `termhost sync watch [--json]`: this process's sync loop in the foreground, for a user or a
/// systemd unit. One line per sync (what was sent and applied; an error with what to do) until
/// Ctrl-C, SIGTERM or SIGHUP. The command itself only waits: the loop's thread syncs, and the
/// feature's shutdown stops it within its bound.
extension BackgroundSync {
    func watch(_ c: CommandInvocation, json: Bool) -> Int32 {
        let seconds: Int
        switch interval {
        case .failure(let error):
            c.printError("termhost sync watch: \(error.message)")
            return 1
        case .success(let configured):
            seconds = configured ?? SyncInterval.defaultSeconds
        }
        guard let cancellation = host.cancellation else {
            c.printError("termhost sync watch: this host cannot tell a command to stop (termhost.cancel/1); use 'termhost sync now'")
            return 1
        }
        let done = DispatchSemaphore(value: 0)
        let registration: Cancellation.Registration
        do { registration = try cancellation.onCancel(scene: c.scene) { _ in done.signal() } } catch {
            c.printError("termhost sync watch: \(error.message)")
            return 1
        }
        defer { registration.remove() }
        let watching: (interval: Double, token: UInt64)
        do { watching = try watch(seconds: seconds, done: done) { report in SyncWatch.print(report, to: c, json: json) } } catch {
            c.printError("termhost sync watch: \(error)")
            return 1
        }
        defer { endWatch(watching.token) }
        if !json { c.printError("termhost sync watch: a sync every \(Int(watching.interval)) s, and whenever the vault signals a change; Ctrl-C stops") }
        done.wait()
        return 0
    }
}

enum SyncWatch {
    /// One line per sync: standard output, or standard error for a failure.
    static func print(_ r: SyncLoop.Report, to c: CommandInvocation, json: Bool) {
        let now = Date().timeIntervalSince1970
        if json {
            let (outcome, error): (String, String?) = switch r.outcome {
            case .synced: ("synced", nil)
            case .paused: ("paused", nil)
            case .failed(let message): ("failed", message)
            }
            c.print("{\"time\":\(Int64(now)),\"outcome\":\"\(outcome)\",\"backend\":\(JSONText.quoted(r.backend)),\"sent\":\(r.sent),\"applied\":\(r.applied),"
                    + "\"pending\":\(r.pending.map(String.init) ?? "null"),\"conflicts\":\(r.conflicts),\"error\":\(error.map(JSONText.quoted) ?? "null")}")
            return
        }
        let time = SyncCommand.time(now)
        switch r.outcome {
        case .synced:
            c.print("\(time)  synced with \(VisibleText.of(r.backend)): sent \(r.sent), applied \(r.applied), pending \(r.pending ?? 0)"
                    + (r.conflicts > 0 ? "; \(r.conflicts) conflict(s): 'termhost sync conflicts'" : ""))
        case .paused:
            c.print("\(time)  paused on this device ('termhost sync resume' restarts it)")
        case .failed(let message):
            c.printError("\(time)  sync failed: \(VisibleText.of(message))")
        }
    }
}
