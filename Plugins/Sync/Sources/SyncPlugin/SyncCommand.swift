import Foundation
import SyncCore
import TermhostSDK

/// `termhost sync ...`.
struct SyncCommand {
    static let usage = """
    usage: termhost sync status [--json]        backend, last success, pending changes, last error
           termhost sync now [--json]           sync at once
           termhost sync watch [--json]         sync every interval and on the vault's signal,
                                                one line per sync, until Ctrl-C or SIGTERM
           termhost sync pause | resume         stop or restart syncing on this device
           termhost sync conflicts [--json]     records both sides changed, with their IDs
           termhost sync resolve ID --keep local|remote
           termhost sync discard-local [--yes]  list the changes not yet sent; with --yes drop them,
                                                each record back to the vault's copy (for a role
                                                that may only read the vault)
           termhost sync history [COLLECTION/KEY] [--limit N] [--json]
                                                the versions the vault holds (of one record, or
                                                the newest of all), newest first, with device and change
           termhost sync restore COLLECTION/KEY [--version N]
                                                bring a version back as a new change; without
                                                --version, a deleted record's last version
           termhost sync reset                  forget the vault's cursor and versions; the next
                                                sync reconciles everything (nothing local is deleted)
           termhost sync purge [--force]        drop deletions every device has seen and every
                                                record's old versions (history and restore then
                                                start again); --force drops all deletions (devices
                                                behind reconcile in full, never re-adding them)
           termhost sync backend show [--json]
           termhost sync backend set folder PATH [--create]
                                                a folder with a vault in it; --create makes one
                                                there if there is none (never done by a sync)
           termhost sync backend set postgres host=H [port=N] dbname=D user=U vault=V
                    [sslmode=M] [sslrootcert=FILE] [connect_timeout=S] [--password-stdin]
                                                the password: one line on stdin, else asked on a
                                                terminal (empty: none); kept in the secrets store
    """
    static let spec = CommandArguments("termhost sync", usage: usage, options: [.flag("--json"), .value("--keep"), .flag("--force"), .flag("--password-stdin"), .flag("--create"), .flag("--yes"),
                                                 .value("--version"), .value("--limit")],
                                       maxArguments: 12)

    let c: CommandInvocation
    let store: Store
    let syncStore: SyncStore
    /// The Sync plugin's own secrets: the PostgreSQL password, nothing else.
    let secrets: Secrets
    let interact: Interact?
    let environment: [String: String]
    let inBackground: () -> Bool
    /// `termhost sync watch`, run by the feature's background sync.
    let watch: (_ json: Bool) -> Int32

    func run() -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try c.parse(with: SyncCommand.spec) } catch { return error.status }
        let json = parsed.has("--json") || c.jsonOutput
        let words = parsed.arguments
        do {
            switch words.first ?? "status" {
            case "backend": return try backend(Array(words.dropFirst()), json: json, passwordFromStdin: parsed.has("--password-stdin"),
                                               create: parsed.has("--create"))
            case "status": return try status(json: json)
            case "now": return try now(json: json)
            case "watch":
                guard words.count == 1 else { c.printError("termhost sync watch: takes no arguments\n\(SyncCommand.usage)"); return 2 }
                return watch(json)
            case "pause", "resume":
                let paused = words[0] == "pause"
                try engine().setPaused(paused)
                if json { c.print("{\"paused\":\(paused)}"); return 0 }
                c.print(paused ? "sync paused on this device ('termhost sync resume' restarts it)" : "sync resumed")
                return 0
            case "conflicts": return try conflicts(json: json)
            case "resolve":
                guard words.count == 2, let keep = parsed.value("--keep").flatMap(SyncEngine.Side.init(rawValue:)) else {
                    c.printError("termhost sync resolve: give a conflict ID and --keep local or --keep remote\n\(SyncCommand.usage)")
                    return 2
                }
                let e = try engine()
                try e.resolve(words[1], keep: keep)
                c.print("conflict \(words[1]) resolved: keeping the \(keep.rawValue) version")
                if case .failed(let m) = e.sync() { c.printError("termhost sync: \(m)"); return 1 }
                return 0
            case "purge":
                let n = try engine().purge(force: parsed.has("--force"))
                c.print(json ? "{\"purged\":\(n)}" : "purged \(n) deletion(s) from the vault")
                return 0
            case "history", "restore":
                return try history(words, parsed: parsed, json: json)
            case "discard-local":
                return try discardLocal(confirmed: parsed.has("--yes"), json: json)
            case "reset":
                try engine().reset()
                c.print(json ? "{\"reset\":true}" : "sync state reset: the next sync reconciles every record with the vault")
                return 0
            default:
                c.printError("termhost sync: unknown subcommand '\(VisibleText.of(words[0]))'\n\(SyncCommand.usage)")
                return 2
            }
        } catch {
            c.printError("termhost sync: \(error)")
            return 1
        }
    }

    func engine() throws -> SyncEngine {
        try SyncEngine(backend: try BackendSettings.load(store, environment).open(secrets: secrets, environment: environment), local: HostRecords(syncStore),
                       store: PluginState(store), clock: try DisplayClock.make(environment))
    }

    private func status(json: Bool) throws -> Int32 {
        let e = try engine()
        let s = try e.status()
        if json {
            c.print("{\"backend\":\(JSONText.quoted(s.backend)),\"device\":\(JSONText.quoted(s.device)),\"vault\":\(s.vault.map(JSONText.quoted) ?? "null"),"
                    + "\"last_success\":\(s.lastSuccess.map { String(Int64($0)) } ?? "null"),\"pending\":\(s.pending),\"conflicts\":\(s.conflicts),"
                    + "\"quarantined\":\(s.quarantined),\"paused\":\(s.paused),\"last_error\":\(s.lastError.map(JSONText.quoted) ?? "null")}")
            return 0
        }
        c.print("backend: \(VisibleText.of(s.backend))")
        c.print("device: \(s.device)")
        c.print("last success: \(s.lastSuccess.map(SyncCommand.time) ?? "never") (this device's clock)")
        c.print("pending changes: \(s.pending)")
        if s.conflicts > 0 { c.print("conflicts: \(s.conflicts) ('termhost sync conflicts' lists them)") }
        if s.quarantined > 0 {
            c.print("quarantined: \(s.quarantined) record(s) in the vault could not be read and were kept aside")
            // Each named with why, so a refused record is never a silent one; the vault's own
            // text, so control characters are made visible.
            let items = (try? e.quarantined()) ?? []
            for item in items.prefix(10) { c.print("  \(VisibleText.of(item.location)): \(VisibleText.of(item.reason))") }
            if items.count > 10 { c.print("  and \(items.count - 10) more") }
        }
        if s.paused { c.print("paused ('termhost sync resume' restarts it)") }
        if let e = s.lastError { c.print("last error: \(VisibleText.of(e))") }
        return 0
    }

    private func history(_ words: [String], parsed: ParsedArguments, json: Bool) throws -> Int32 {
        var numbers: [String: Int64] = [:]
        for option in ["--version", "--limit"] {
            guard let text = parsed.value(option) else { continue }
            guard let n = Int64(text), n > 0 else { c.printError("termhost sync \(words[0]): \(option) takes a number from 1 (got '\(VisibleText.of(text))')"); return 2 }
            numbers[option] = n
        }
        let restoring = words[0] == "restore"
        guard restoring ? words.count == 2 : words.count <= 2, restoring || numbers["--version"] == nil, !restoring || numbers["--limit"] == nil else {
            c.printError("termhost sync \(words[0]): \(restoring ? "give one record, COLLECTION/KEY" : "give at most one record")\n\(SyncCommand.usage)")
            return 2
        }
        let command = HistoryCommand(c: c, engine: try engine(), collections: try HostRecords(syncStore).collections())
        if restoring { return try command.restore(words[1], version: numbers["--version"], json: json) }
        return try command.history(words.count == 2 ? words[1] : nil, limit: numbers["--limit"].map { Int(min($0, 100_000)) }, json: json)
    }

    /// Lists the pending changes; with `confirmed`, drops them (SyncEngine.discardLocal).
    private func discardLocal(confirmed: Bool, json: Bool) throws -> Int32 {
        let e = try engine()
        let ids = confirmed ? try e.discardLocal() : try e.pendingChanges()
        if json {
            let list = ids.map { JSONText.quoted($0.description) }.joined(separator: ",")
            c.print("{\"discarded\":\(confirmed),\"changes\":[\(list)]}")
            return 0
        }
        guard !ids.isEmpty else { c.print("no changes waiting to be sent"); return 0 }
        c.print(confirmed ? "dropped \(ids.count) change(s); each record is back to the vault's copy:" : "\(ids.count) change(s) not yet sent:")
        for id in ids { c.print("  \(VisibleText.of(id.description))") }
        if !confirmed { c.print("run 'termhost sync discard-local --yes' to drop them (each record goes back to the vault's copy)") }
        return 0
    }

    private func now(json: Bool) throws -> Int32 {
        if inBackground() {
            c.printError("termhost sync: not syncing while in background; it runs again in foreground")
            return 1
        }
        let e = try engine()
        switch e.sync() {
        case .synced:
            let s = try e.status()
            c.print(json ? "{\"synced\":true,\"pending\":\(s.pending),\"conflicts\":\(s.conflicts)}"
                         : "synced with \(VisibleText.of(s.backend))" + (s.conflicts > 0 ? "; \(s.conflicts) conflict(s): 'termhost sync conflicts'" : ""))
            return 0
        case .paused:
            c.printError("termhost sync: paused on this device ('termhost sync resume' restarts it)")
            return 1
        case .failed(let message):
            c.printError("termhost sync: \(VisibleText.of(message))")
            return 1
        }
    }

    private func conflicts(json: Bool) throws -> Int32 {
        let list = try engine().conflicts()
        if json {
            let items = list.map { x in
                "{\"id\":\(JSONText.quoted(x.conflictID)),\"record\":\(JSONText.quoted(x.id.description)),\"reason\":\(JSONText.quoted(x.reason)),"
                    + "\"local\":\(x.local.map { JSONText.quoted(String(decoding: $0, as: UTF8.self)) } ?? "null"),"
                    + "\"remote\":\(x.remote.map { JSONText.quoted(String(decoding: $0, as: UTF8.self)) } ?? "null")}"
            }
            c.print("[" + items.joined(separator: ",") + "]")
            return 0
        }
        if list.isEmpty { c.print("no conflicts") }
        for x in list {
            c.print("\(x.conflictID)  \(VisibleText.of(x.id.description)): \(x.reason)")
            c.print("    local:  \(x.local.map { VisibleText.of(bytes: $0) } ?? "(deleted)")")
            c.print("    remote: \(x.remote.map { VisibleText.of(bytes: $0) } ?? "(deleted)")")
        }
        if !list.isEmpty { c.print("resolve with: termhost sync resolve ID --keep local|remote") }
        return 0
    }

    static func time(_ seconds: Double) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: Date(timeIntervalSince1970: seconds))
    }
}
