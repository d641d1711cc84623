import Foundation
import TermhostSDK

/// `termhost transfers`: the daemon's background transfers (`sftp get|put --background`),
/// and pause, resume and cancel by ID. In the daemon it shows them live; with no daemon
/// running it reads what the store keeps (what the next daemon will go on with).
struct TransfersCommand {
    static let usage = """
    usage: termhost transfers [--json]          background transfers: state, progress, rate
           termhost transfers pause ID          pause it (partial files kept) until resumed
           termhost transfers resume ID         go on, with the same checks as sftp --resume
           termhost transfers cancel ID         stop it and remove its partial files
    Queue one with termhost sftp get|put --background. A lost connection is retried 1, 2, 5,
    10, then every 30 s; a stopped daemon goes on with them when it starts again.
    """
    static let arguments = CommandArguments("termhost transfers", usage: usage, options: [.flag("--json")], maxArguments: 2)

    let invocation: CommandInvocation
    let host: PluginHost

    func run() -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(invocation.arguments, with: TransfersCommand.arguments) } catch { return error.status }
        let json = invocation.jsonOutput || parsed.has("--json")
        guard let context = BackgroundTransfers.context(host) else {
            invocation.printError("termhost transfers: the host store or the SSH transport is unavailable")
            return 1
        }
        guard let verb = parsed.arguments.first else { return list(context, json: json) }
        guard ["pause", "resume", "cancel"].contains(verb) else {
            invocation.printError("termhost transfers: unknown action '\(verb.shown)' (pause, resume or cancel)\n" + TransfersCommand.usage)
            return 2
        }
        guard parsed.arguments.count == 2, let id = Int(parsed.arguments[1]), id > 0 else {
            invocation.printError("usage: termhost transfers \(verb) ID (a number termhost transfers lists)")
            return 2
        }
        do throws(PluginError) {
            return try act(verb, id, context)
        } catch {
            invocation.printError("termhost transfers: \(error.message)")
            return 1
        }
    }

    /// The transfer to act on: the daemon's own, or (no daemon runs) one made from the store.
    private func transfer(_ id: Int, _ context: BackgroundTransfer.Context) throws(PluginError) -> BackgroundTransfer {
        if host.isDaemon {
            guard let live = BackgroundTransfers.shared.transfer(id) else { throw PluginError("no transfer \(id) (termhost transfers lists them)") }
            return live
        }
        guard let record = try context.records.all().first(where: { $0.id == id }) else {
            throw PluginError("no transfer \(id) (termhost transfers lists them)")
        }
        if let problem = record.problem { throw PluginError("transfer \(id) cannot be used: \(problem)") }
        return BackgroundTransfer(record, plan: nil, context: context)
    }

    private func act(_ verb: String, _ id: Int, _ context: BackgroundTransfer.Context) throws(PluginError) -> Int32 {
        // Resuming moves bytes, which only the daemon does; pausing and cancelling a transfer
        // no daemon runs change the store (and remove partial files) right here.
        if verb == "resume" {
            _ = try transfer(id, context)   // a wrong ID never starts a daemon
            if let status = invocation.requireDaemon(host, "termhost transfers") { return status }
        }
        let t = try transfer(id, context)
        switch verb {
        case "pause":
            try t.pause()
            invocation.print("transfer \(id): paused; its partial files are kept ('termhost transfers resume \(id)' goes on)")
        case "resume":
            if try t.resume() { BackgroundTransfers.shared.launch(t) }
            invocation.print("transfer \(id): resumed")
        default:
            switch try t.cancel() {
            case .now: t.finishCancel()
            case .byItsRun: _ = waitUntilEnded(t)
            }
            invocation.print("transfer \(id): cancelled; its partial files are removed")
        }
        return 0
    }

    /// Waits (at most 30 s) for a run to end its transfer, so `cancel` returns once the partial
    /// files are gone.
    private func waitUntilEnded(_ t: BackgroundTransfer) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if case .ended = t.state { return true }
            usleep(50_000)   // the run's thread removes the partials; a person waits for this
        }
        return false
    }

    // MARK: listing

    private func list(_ context: BackgroundTransfer.Context, json: Bool) -> Int32 {
        let transfers: [BackgroundTransfer]
        if host.isDaemon {
            transfers = BackgroundTransfers.shared.all
        } else {
            do throws(PluginError) {
                transfers = try context.records.all().map { BackgroundTransfer($0, plan: nil, context: context) }
            } catch {
                invocation.printError("termhost transfers: the transfers cannot be read: \(error.message)")
                return 1
            }
        }
        let rows = transfers.map { TransferRow($0, daemon: host.isDaemon) }
        if json {
            invocation.print("[" + rows.map(\.json).joined(separator: ",") + "]")
        } else if rows.isEmpty {
            invocation.print("no background transfers (queue one with termhost sftp get|put --background)")
        } else {
            rows.forEach { invocation.print($0.line) }
        }
        return 0
    }
}

/// One transfer as `termhost transfers` shows it.
struct TransferRow {
    let record: BackgroundRecord
    let state: String
    let reason: String?
    let retryIn: Int?
    let figures: BackgroundProgress.Figures

    init(_ t: BackgroundTransfer, daemon: Bool) {
        record = t.record
        figures = t.progress.now
        var retry: Int?
        let state: String, reason: String?
        switch t.state {
        case .connecting: (state, reason) = ("connecting", nil)
        case .running: (state, reason) = ("running", nil)
        case .waiting(let next, let why):
            (state, reason) = ("reconnecting", why)
            retry = max(0, Int(next.timeIntervalSinceNow.rounded(.up)))
        case .paused(let why): (state, reason) = ("paused", why == "paused" ? nil : why)
        case .ended(let how):
            let word = how.prefix { $0 != ":" }
            (state, reason) = (String(word), how.count > word.count ? String(how.dropFirst(word.count + 2)) : nil)
        }
        retryIn = retry
        // In the store only: one the next daemon will go on with.
        if !daemon, record.wanted, record.ended == nil { (self.state, self.reason) = ("waits for the daemon", nil) } else { (self.state, self.reason) = (state, reason) }
    }

    private var stateText: String {
        switch state {
        case "reconnecting": "reconnecting in \(retryIn ?? 0) s (\((reason ?? "").shown))"
        case "paused", "failed": reason.map { "\(state): \($0.shown)" } ?? state
        default: state
        }
    }

    var line: String {
        var parts = ["\(record.id)", record.direction == .download ? "get" : "put", stateText]
        if figures.started {
            let percent = figures.totalBytes > 0 ? min(100, Int(Double(figures.movedBytes) / Double(figures.totalBytes) * 100)) : 100
            parts.append("\(percent)% of \(ConsoleProgress.size(figures.totalBytes)), \(figures.done) of \(figures.files) file\(figures.files == 1 ? "" : "s")")
            if state == "running" { parts.append("\(ConsoleProgress.size(ConsoleProgress.bytes(figures.rate)))/s") }
        }
        parts.append("\(record.from.shown) -> \(record.to.shown)")
        return parts.joined(separator: "  ")
    }

    var json: String {
        var fields = [
            "\"id\":\(record.id)", "\"direction\":\"\(record.direction.rawValue)\"", "\"host\":\(JSONText.quoted(record.host))",
            "\"remote\":\(JSONText.quoted(record.remote))", "\"local\":\(JSONText.quoted(record.local))",
            "\"state\":\(JSONText.quoted(state))", "\"files\":\(figures.files)", "\"filesDone\":\(figures.done)",
            "\"filesFailed\":\(figures.failed)", "\"bytes\":\(figures.totalBytes)", "\"bytesDone\":\(figures.movedBytes)",
            "\"rate\":\(ConsoleProgress.bytes(figures.rate))", "\"resumedFrom\":\(figures.resumedFrom)",
        ]
        if let reason { fields.append("\"reason\":\(JSONText.quoted(reason))") }
        if let retryIn { fields.append("\"retryIn\":\(retryIn)") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
