#if canImport(TermhostSDK)
import TermhostSDK   // the sync-record fuzz target compiles this file with the SDK files it uses
#endif

/// What another device's version of a monitor must meet before the Sync plugin applies it
/// (store.h, declare_sync_check): what `metrics add` and `metrics edit` make. Its key is its
/// host; the interval is 1 to 3600 s (0 would make the remote loop spin); a bounded list of
/// interface names; an order and a resume count that fit the list.
enum SyncedMonitorCheck {
    static let maxInterfaces = 64
    static let orders = 0...1_000_000

    static func monitor(key: String, _ value: [UInt8]) -> String? {
        let m: Monitor
        switch SyncRecordCheck.decode(Monitor.self, value, what: "a monitor") {
        case .success(let monitor): m = monitor
        case .failure(let refusal): return refusal.reason
        }
        if m.host != key { return "its host '\(VisibleText.of(m.host))' is not its key '\(VisibleText.of(key))'" }
        if let why = SyncRecordCheck.word(m.host, field: "host", maxBytes: 600) { return why }
        do {
            _ = try BoundedNumber.check(m.interval, name: "interval", in: 1...3600, unit: "seconds")
            _ = try BoundedNumber.check(m.order, name: "order", in: orders)
            if let r = m.resumes { _ = try BoundedNumber.check(r, name: "resumes", in: 0...Int(Int32.max)) }
        } catch { return error.description }
        let interfaces = m.interfaces ?? []
        if interfaces.count > maxInterfaces { return "a monitor may name at most \(maxInterfaces) interfaces, not \(interfaces.count)" }
        for name in interfaces { if let why = SyncRecordCheck.word(name, field: "interface", maxBytes: 64) { return why } }
        return nil
    }
}
