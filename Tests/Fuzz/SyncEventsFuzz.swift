// fuzz-sources: SDK/Swift/TermhostSDK/SyncApplying.swift SDK/Swift/TermhostSDK/SSHHostChange.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift
// The payloads plugins decode to retire runtime state after a sync: termhost.sync.applying
// (from the host) and org.termhost.ssh.host.changed (from the SSH plugin), on any bytes. What
// is accepted is within its bounds; an accepted value written back as JSON (JSONText) reads
// back equal; decoding is deterministic; nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let a = SyncApplying(json: text) {
        for name in [a.namespace, a.collection, a.key] {
            precondition(!name.isEmpty && name.utf8.count <= SyncApplying.maximumNameBytes, "a name out of bounds was accepted")
        }
        let again = "{\"namespace\":\(JSONText.quoted(a.namespace)),\"collection\":\(JSONText.quoted(a.collection)),\"key\":\(JSONText.quoted(a.key)),\"deleted\":\(a.deleted)}"
        precondition(SyncApplying(json: again) == a, "written back, the payload reads differently")
        precondition(SyncApplying(json: text) == a, "not deterministic")
    }
    if let c = SSHHostChange(json: text) {
        precondition(!c.host.isEmpty && c.host.utf8.count <= SSHHostChange.maximumTextBytes)
        precondition(c.reason.utf8.count <= SSHHostChange.maximumTextBytes)
        precondition(SSHHostChange(json: c.json) == c, "written back, the change reads differently")
        precondition(SSHHostChange(json: text) == c, "not deterministic")
    }
    return 0
}
