import Foundation
import Testing
import TermhostSDK

/// The payloads plugins act on when another device's change is applied: checked although they
/// come from the host and the SSH plugin, since acting on a wrong one closes connections.
@Suite struct SyncEventPayloadTests {
    @Test func theHostsApplyingPayloadDecodes() {
        let json = #"{"namespace":"org.termhost.ssh","collection":"hosts","key":"web","deleted":false}"#
        #expect(SyncApplying(json: json) == SyncApplying(namespace: "org.termhost.ssh", collection: "hosts", key: "web", deleted: false))
    }

    @Test func anythingButTheDocumentedObjectIsRefused() {
        for bad in ["", "null", "[]", "{", #"{"namespace":"n","collection":"c","key":"k"}"#,
                    #"{"namespace":"n","collection":"c","key":"k","deleted":"false"}"#,
                    #"{"namespace":"n","collection":"c","key":"k","deleted":0}"#,
                    #"{"namespace":"n","collection":"c","key":"","deleted":true}"#,
                    #"{"namespace":1,"collection":"c","key":"k","deleted":true}"#,
                    "{\"namespace\":\"n\",\"collection\":\"c\",\"key\":\"\(String(repeating: "k", count: SyncApplying.maximumNameBytes + 1))\",\"deleted\":true}"] {
            #expect(SyncApplying(json: bad) == nil, "\(bad)")
        }
    }

    @Test func aHostChangeReadsBackAsTheSSHPluginWroteIt() {
        let change = SSHHostChange(host: "web \"a\"", reason: "host 'web' was changed on another device (sync)", deleted: true)
        #expect(SSHHostChange(json: change.json) == change)
        #expect(SSHHostChange(json: #"{"host":"","reason":"r","deleted":false}"#) == nil)
        #expect(SSHHostChange(json: #"{"host":"web","reason":"r"}"#) == nil)
    }
}
