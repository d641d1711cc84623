// fuzz-sources: SDK/Swift/TermhostSDK/SyncRecordCheck.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/BoundedNumber.swift Plugins/SSH/Sources/SSHPlugin/SyncedRecordRules.swift Plugins/SSH/Sources/SSHPlugin/HostRules.swift SDK/Swift/TermhostSDK/EnvironmentName.swift Plugins/SSH/Sources/SSHPlugin/Destination.swift Plugins/SSH/Sources/SSHPlugin/SyncedHostKeyRecord.swift Plugins/SSH/Sources/SSHPlugin/KnownHostsParser.swift Plugins/SSH/Sources/SSHPlugin/Base64.swift Plugins/Forwarding/Sources/ForwardingPlugin/SyncedRuleCheck.swift Plugins/Forwarding/Sources/ForwardingPlugin/ForwardRule.swift Plugins/Metrics/Sources/MetricsPlugin/SyncedMonitorCheck.swift Plugins/Metrics/Sources/MetricsPlugin/Monitor.swift
// The checks a record from another device must pass before Sync applies it (hosts, identities,
// host keys, forwarding rules, monitors), on any bytes: the first byte picks the collection,
// then the record key, a NUL byte, and the value (oversize fields, secret IDs, escapes, numbers
// past Int64 included). Nothing traps; a reason is one line of plain text (it is printed by
// `sync status`); an accepted record is keyed by its own name and meets the rules `add` applies.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let rest = bytes.dropFirst()
    let split = rest.firstIndex(of: 0) ?? rest.endIndex
    let key = String(decoding: rest[..<split], as: UTF8.self)
    let value = Array(rest[min(split + 1, rest.endIndex)...])
    let reason: String?
    switch bytes[0] % 5 {
    case 0:
        reason = SyncedRecordRules.host(key: key, value)
        if reason == nil, case .success(let r) = SyncRecordCheck.decode(HostRecord.self, value, what: "") {
            precondition(r.name == key, "a host keyed by another name was accepted")
            precondition(!r.isTemplate, "a template was taken from another device")
            precondition(HostRules.check(name: r.name, address: r.address, port: r.port, user: r.user, identityFile: r.identityFile,
                                         jump: r.jump, keepaliveInterval: r.keepaliveInterval, keepaliveCountMax: r.keepaliveCountMax,
                                         sendEnv: r.sendEnv, setEnv: r.setEnv, certificateFile: r.certificateFile,
                                         hostKeyAlias: r.hostKeyAlias, moreIdentityFiles: r.moreIdentityFiles) == nil)
            for entry in r.setEnv ?? [] { precondition(!entry.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "a SetEnv value with a control character was accepted") }
            let again = try! JSONEncoder().encode(r)
            precondition(SyncedRecordRules.host(key: key, Array(again)) == nil, "an accepted host is refused once encoded again")
        }
    case 1:
        reason = SyncedRecordRules.identity(key: key, value)
        if reason == nil, case .success(let r) = SyncRecordCheck.decode(IdentityRecord.self, value, what: "") {
            precondition(r.name == key && HostRules.name(r.name) == nil, "an identity keyed by another name was accepted")
        }
    case 2:
        reason = SyncedRecordRules.hostKey(key: key, value)
    case 3:
        reason = SyncedRuleCheck.rule(key: key, value)
        if reason == nil, case .success(let r) = SyncRecordCheck.decode(ForwardRule.self, value, what: "") {
            precondition(r.id == key && (0...65535).contains(r.bindPort), "a rule out of range was accepted")
            precondition((r.kind == .dynamic) == (r.targetHost == nil && r.targetPort == nil), "a rule's target does not fit its kind")
        }
    default:
        reason = SyncedMonitorCheck.monitor(key: key, value)
        if reason == nil, case .success(let m) = SyncRecordCheck.decode(Monitor.self, value, what: "") {
            precondition(m.host == key && (1...3600).contains(m.interval), "a monitor out of range was accepted")
        }
    }
    if let reason {
        precondition(VisibleText.isPlain(reason) && !reason.contains("\n"), "a refusal is not one plain line")
    }
    return 0
}
