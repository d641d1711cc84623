import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // the sync-record fuzz target compiles this file with the SDK files it uses
#endif

/// What another device's version of a saved host, identity or host key must meet before the
/// Sync plugin applies it (store.h, declare_sync_check): the rules `hosts add` and `identities
/// add` apply here (HostRules), and a key that is the record's own name, so `hosts show NAME`
/// reaches every record and `hosts list` never shows two lines for one name. A refused version
/// is quarantined by Sync with the reason returned here, and never reaches this plugin's store.
enum SyncedRecordRules {
    static func host(key: String, _ value: [UInt8]) -> String? {
        let r: HostRecord
        switch SyncRecordCheck.decode(HostRecord.self, value, what: "a saved host") {
        case .success(let record): r = record
        case .failure(let problem): return problem.reason
        }
        if r.name != key { return "its name '\(VisibleText.of(r.name))' is not its key '\(VisibleText.of(key))'" }
        // A template catches every name it matches that the user types (`*`: all of them):
        // only this device's own import may make one.
        if r.isTemplate { return "a template ('\(VisibleText.of(r.name))': a name with * or ?) is never taken from another device; import it here (termhost hosts import)" }
        if let why = HostRules.check(name: r.name, address: r.address, port: r.port, user: r.user, identityFile: r.identityFile,
                                     jump: r.jump, keepaliveInterval: r.keepaliveInterval, keepaliveCountMax: r.keepaliveCountMax,
                                     sendEnv: r.sendEnv, setEnv: r.setEnv, certificateFile: r.certificateFile,
                                     hostKeyAlias: r.hostKeyAlias, moreIdentityFiles: r.moreIdentityFiles) {
            return why
        }
        for tag in r.tags ?? [] { if let why = HostRules.tag(tag) { return "tag: \(why)" } }
        if let identity = r.identity, let why = HostRules.name(identity) { return "identity: \(why)" }
        return nil
    }

    static func identity(key: String, _ value: [UInt8]) -> String? {
        let r: IdentityRecord
        switch SyncRecordCheck.decode(IdentityRecord.self, value, what: "a saved identity") {
        case .success(let record): r = record
        case .failure(let problem): return problem.reason
        }
        if r.name != key { return "its name '\(VisibleText.of(r.name))' is not its key '\(VisibleText.of(key))'" }
        if let why = HostRules.name(r.name) { return "name: \(why)" }
        if let user = r.user, let why = HostRules.user(user) { return "user: \(why)" }
        if let file = r.keyFile, let why = HostRules.path(file) { return "key file: \(why)" }
        return nil
    }

    static func hostKey(key: String, _ value: [UInt8]) -> String? {
        if case .failure(let refusal) = SyncedHostKeyRecord.decode(recordKey: key, value: value) { return refusal.reason }
        return nil
    }
}
