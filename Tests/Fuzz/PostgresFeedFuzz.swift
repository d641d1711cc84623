// fuzz-sources: Plugins/Sync/Sources/SyncPostgres/PostgresFeed.swift Plugins/Sync/Sources/SyncCore/SyncBackend.swift
// What a PostgreSQL server (or whoever answers on its address) sends the Sync backend, on any
// bytes: rows of a pull page and of a push answer (fields split at 0x00, rows at 0x01, 0x02 a
// NULL), of a history answer, a NOTIFY payload, a cursor and a hexadecimal body. An accepted
// page is in strictly increasing sequence order and accounts for every row; an accepted
// history is in strictly falling order, one version per row, each usable or damaged, never
// both; push results match the changes one for one; hexadecimal round-trips; nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    let rows: [[String?]] = bytes.split(separator: 1, omittingEmptySubsequences: false).map { row in
        row.split(separator: 0, omittingEmptySubsequences: false).map { $0 == [2] ? nil : String(decoding: $0, as: UTF8.self) }
    }
    if let page = try? PostgresFeed.page(rows, after: 0, limit: 100, vault: "team") {
        precondition(page.records.count + page.damaged.count == rows.count, "a row vanished")
        let seqs = page.records.map { Int64($0.version.token)! }
        precondition(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "records out of order")
        precondition(page.records.allSatisfy { ($0.payload?.count ?? 0) <= PostgresFeed.maxPayload })
    }
    if let history = try? PostgresFeed.history(rows, of: nil, limit: 100) {
        precondition(history.count == rows.count, "a version vanished")
        precondition(zip(history, history.dropFirst()).allSatisfy { $0.number > $1.number }, "versions out of order")
        precondition(history.allSatisfy { $0.damage == nil || $0.payload == nil })
        precondition(history.allSatisfy { ($0.payload?.count ?? 0) <= PostgresFeed.maxPayload })
    }
    let changes = rows.indices.map { SyncChange(changeID: "c\($0)", id: SyncRecordID(namespace: "n", collection: "c", key: "k\($0)"), base: nil, payload: nil) }
    if let results = try? PostgresFeed.pushResults(rows, changes: changes) {
        precondition(results.count == changes.count)
        for (result, change) in zip(results, changes) {
            if case .conflict(let record) = result {
                precondition(record.id == change.id)
                // A body too large or malformed is marked unreadable, never handed over.
                precondition((record.payload?.count ?? 0) <= PostgresFeed.maxPayload && (record.unreadable == nil || record.payload == nil))
            }
        }
    }
    if let seq = PostgresFeed.notifiedSequence(text, vault: "team") { precondition(seq >= 0) }
    if let n = try? PostgresFeed.sequence(SyncCursor(text)) { precondition(n >= 0) }
    if let decoded = PostgresFeed.bytes(hex: text) {
        precondition(PostgresFeed.bytes(hex: PostgresFeed.hex(decoded)) == decoded)
    }
    precondition(PostgresFeed.bytes(hex: PostgresFeed.hex(bytes)) == bytes)
    return 0
}
