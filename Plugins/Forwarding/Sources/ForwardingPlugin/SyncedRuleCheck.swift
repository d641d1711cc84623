#if canImport(TermhostSDK)
import TermhostSDK   // the sync-record fuzz target compiles this file with the SDK files it uses
#endif

/// What another device's version of a saved rule must meet before the Sync plugin applies it
/// (store.h, declare_sync_check): what `forward add` makes. Its key is its ID; ports are in
/// range (a port out of range would reach a C call as Int32); -L and -R name a target, -D none;
/// names and addresses are one plain word or line that cannot read as an option.
enum SyncedRuleCheck {
    static func rule(key: String, _ value: [UInt8]) -> String? {
        let r: ForwardRule
        switch SyncRecordCheck.decode(ForwardRule.self, value, what: "a forwarding rule") {
        case .success(let rule): r = rule
        case .failure(let refusal): return refusal.reason
        }
        if r.id != key { return "its ID '\(VisibleText.of(r.id))' is not its key '\(VisibleText.of(key))'" }
        if r.name.isEmpty || r.name.utf8.count > 512 || !VisibleText.isPlain(r.name) {
            return "name: a rule's name must be 1 to 512 bytes of text without control characters"
        }
        if let why = SyncRecordCheck.word(r.host, field: "host", maxBytes: 600) { return why }
        if let bind = r.bindAddress, let why = SyncRecordCheck.word(bind, field: "bind address") { return why }
        do { _ = try r.validated() } catch { return error.message }
        switch (r.kind, r.targetHost, r.targetPort) {
        case (.dynamic, nil, nil): return nil
        case (.dynamic, _, _): return "a -D rule has no target"
        case (_, let host?, _?): return SyncRecordCheck.word(host, field: "target host")
        default: return "a \(r.kind.flag) rule needs a target host and port"
        }
    }
}
