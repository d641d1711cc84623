import Foundation
import SyncCore
import TermhostSDK

/// `termhost sync history [RECORD]` and `termhost sync restore RECORD [--version N]`.
/// The vault's text (keys, fields, device IDs) is untrusted: shown with control characters
/// made visible.
struct HistoryCommand {
    let c: CommandInvocation
    let engine: SyncEngine
    let collections: [SyncCollection]

    /// Without a record, the newest versions of every record: at most this many unless --limit.
    static let defaultLimit = 50

    func history(_ name: String?, limit: Int?, json: Bool) throws -> Int32 {
        var id: SyncRecordID?
        if let name {
            switch RecordName.resolve(name, among: collections) {
            case .success(let found): id = try engine.record(found)
            case .failure(let why): c.printError("termhost sync history: \(why.reason)"); return 2
            }
        }
        let entries = try engine.history(of: id, limit: limit ?? (id == nil ? HistoryCommand.defaultLimit : SyncEngine.maxRestoreHistory))
        // Each version against the same record's version before it (entries are newest first).
        var previous: [Int: SyncHistoryEntry] = [:], older: [SyncRecordID: SyncHistoryEntry] = [:]
        for (n, entry) in entries.enumerated().reversed() {
            previous[n] = older[entry.id]
            older[entry.id] = entry
        }
        let changes = entries.indices.map { SyncHistoryChange(entries[$0], previous: previous[$0]) }
        if json {
            let items = zip(entries, changes).map { entry, change in HistoryCommand.json(entry, change, thisDevice: engine.device) }
            c.print("[" + items.joined(separator: ",") + "]")
            return 0
        }
        guard !entries.isEmpty else {
            c.print(id.map { "the vault holds no version of \(VisibleText.of($0.description))" } ?? "the vault holds no versions")
            return 0
        }
        if let id {
            c.print("versions of \(VisibleText.of(id.description)) the vault holds, newest first:")
        } else {
            c.print("the newest \(entries.count) version(s) the vault holds:")
        }
        for (entry, change) in zip(entries, changes) {
            let when = entry.storedAt.map(SyncCommand.time) ?? "-"
            let device = String(entry.device.prefix(12)) + (entry.device == engine.device ? " (this device)" : "")
            let record = id == nil ? "  \(entry.id.collection)/\(entry.id.key)" : ""
            c.print("  #\(entry.number)  \(when)  \(VisibleText.of(device))\(VisibleText.of(record))  \(VisibleText.of(HistoryCommand.describe(change)))")
        }
        if id != nil { c.print("restore one with: termhost sync restore \(VisibleText.of(name!)) --version N") }
        if entries.first?.storedAt == nil { c.print("(a folder vault orders versions without a clock: none shows a time)") }
        return 0
    }

    func restore(_ name: String, version: Int64?, json: Bool) throws -> Int32 {
        let id: SyncRecordID
        switch RecordName.resolve(name, among: collections) {
        case .success(let found): id = found
        case .failure(let why): c.printError("termhost sync restore: \(why.reason)"); return 2
        }
        // Up to date first, so the restore replaces what the vault holds now and a conflict
        // waiting there is seen (and refused) rather than overwritten.
        if case .failed(let m) = engine.sync() {
            c.printError("termhost sync restore: the vault cannot be reached, nothing was restored: \(VisibleText.of(m))")
            return 1
        }
        let restored = try engine.restore(id, number: version)
        let outcome = engine.sync()
        if json {
            let error: String
            if case .failed(let m) = outcome { error = JSONText.quoted(m) } else { error = "null" }
            c.print("{\"record\":\(JSONText.quoted(restored.id.description)),\"version\":\(restored.number),\"synced\":\(outcome == .synced),\"error\":\(error)}")
            return outcome == .synced ? 0 : 1
        }
        c.print("restored \(VisibleText.of(restored.id.description)) to version \(restored.number)")
        switch outcome {
        case .synced:
            c.print("sent to the vault: every device gets it at its next sync")
            return 0
        case .paused:
            c.printError("termhost sync: paused on this device: the restore is sent once 'termhost sync resume' runs")
            return 1
        case .failed(let m):
            c.printError("termhost sync: the restore is kept here and sent at the next sync: \(VisibleText.of(m))")
            return 1
        }
    }

    static func json(_ entry: SyncHistoryEntry, _ change: SyncHistoryChange, thisDevice: String) -> String {
        let time: String = entry.storedAt.map { String(format: "%.3f", $0) } ?? "null"
        let fields: String = change.fields.map(JSONText.quoted).joined(separator: ",")
        let damage: String = entry.damage.map(JSONText.quoted) ?? "null"
        let value: String = entry.payload.map { JSONText.quoted(String(decoding: $0, as: UTF8.self)) } ?? "null"
        var out = "{\"record\":\(JSONText.quoted(entry.id.description)),\"version\":\(entry.number),\"server_time\":\(time),"
        out += "\"device\":\(JSONText.quoted(entry.device)),\"this_device\":\(entry.device == thisDevice),"
        out += "\"change_id\":\(JSONText.quoted(entry.changeID)),\"change\":\(JSONText.quoted(change.kind)),"
        out += "\"fields\":[\(fields)],\"damage\":\(damage),\"value\":\(value)}"
        return out
    }

    static func describe(_ change: SyncHistoryChange) -> String {
        switch change {
        case .deleted: return "deleted"
        case .saved: return "saved (the oldest version held)"
        case .created: return "created again after a deletion"
        case .changed(let fields): return fields.isEmpty ? "changed" : "changed \(fields.joined(separator: ", "))"
        case .unchanged: return "saved unchanged"
        case .damaged(let why): return "damaged: \(why)"
        }
    }
}

/// A record named on the command line: COLLECTION/KEY, or NAMESPACE/COLLECTION/KEY when two
/// plugins declare collections of one name. The key is the rest, slashes included.
enum RecordName {
    struct Unknown: Error { let reason: String }

    static func resolve(_ text: String, among collections: [SyncCollection]) -> Result<SyncRecordID, Unknown> {
        let three = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        if three.count == 3, !three[2].isEmpty, collections.contains(where: { $0.namespace == three[0] && $0.collection == three[1] }) {
            return .success(SyncRecordID(namespace: three[0], collection: three[1], key: three[2]))
        }
        let two = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard two.count == 2, !two[1].isEmpty else {
            return .failure(Unknown(reason: "name a record as COLLECTION/KEY, e.g. hosts/web (got '\(VisibleText.of(text))')"))
        }
        let owners = collections.filter { $0.collection == two[0] }
        switch owners.count {
        case 1: return .success(SyncRecordID(namespace: owners[0].namespace, collection: two[0], key: two[1]))
        case 0:
            let known = Set(collections.map(\.collection)).sorted().joined(separator: ", ")
            return .failure(Unknown(reason: "no collection '\(VisibleText.of(two[0]))' syncs on this device (those that do: \(known.isEmpty ? "none" : known))"))
        default:
            return .failure(Unknown(reason: "collection '\(two[0])' belongs to \(owners.map(\.namespace).sorted().joined(separator: " and ")): "
                                    + "name the record as NAMESPACE/\(two[0])/KEY"))
        }
    }
}
