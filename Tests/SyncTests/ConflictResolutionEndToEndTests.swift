import Foundation
import Testing
import TestSupport

/// What resolving a conflict does when the vault moved on after the conflict was found, on the
/// real binary: three devices are three data directories and separate `termhost` processes
/// sharing one vault folder. A and B edit the same field at once (a conflict on B); C then edits
/// another field of the record, or the same one again.
@Suite struct ConflictResolutionEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    func device() throws -> TermhostDevice {
        let d = TermhostDevice(plugins: plugins)
        let set = try d.run("sync", "backend", "set", "folder", vault, "--create")
        #expect(set.status == 0, "\(set.output)")
        return d
    }

    /// Three devices holding host "db", and a port conflict on B against A's edit.
    func conflictOnB() throws -> (a: TermhostDevice, b: TermhostDevice, c: TermhostDevice) {
        let a = try device(), b = try device(), c = try device()
        #expect(try a.run("hosts", "add", "db", "db.internal").status == 0)
        for d in [a, b, c] { #expect(try d.run("sync", "now").status == 0) }
        try a.run("hosts", "edit", "db", "--port", "2200")
        try b.run("hosts", "edit", "db", "--port", "2201")
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").stdout.hasSuffix("; 1 conflict(s): 'termhost sync conflicts'\n"))
        #expect(try c.run("sync", "now").status == 0)
        return (a, b, c)
    }

    func conflictID(_ d: TermhostDevice) throws -> String {
        let listed = try d.run("sync", "conflicts", "--json").stdout
        return String(try #require(listed.firstMatch(of: /"id":"([0-9a-f]+)"/)?.1, "\(listed)"))
    }

    func expectHost(on devices: [TermhostDevice], port: String, address: String) throws {
        for d in devices {
            let shown = try d.run("hosts", "show", "db", "--json").stdout
            #expect(shown.contains(port) && shown.contains(address), "\(shown)")
            #expect(try d.run("sync", "conflicts").stdout == "no conflicts\n")
        }
    }

    @Test func keepLocalKeepsTheClashingFieldAndAnotherDevicesEditOfADifferentField() throws {
        let (a, b, c) = try conflictOnB()
        try c.run("hosts", "edit", "db", "--address", "db2.internal")
        #expect(try c.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)   // the conflict now holds C's version
        #expect(try b.run("sync", "resolve", try conflictID(b), "--keep", "local").status == 0)
        for d in [a, c] { #expect(try d.run("sync", "now").status == 0) }
        try expectHost(on: [a, b, c], port: "2201", address: "db2.internal")
    }

    @Test func keepLocalAgainstAConflictOlderThanTheVaultMergesTheNewerVersion() throws {
        let (a, b, c) = try conflictOnB()
        let id = try conflictID(b)
        try c.run("hosts", "edit", "db", "--address", "db2.internal")
        #expect(try c.run("sync", "now").status == 0)   // B's conflict still shows A's version
        #expect(try b.run("sync", "resolve", id, "--keep", "local").status == 0)
        for d in [a, c] { #expect(try d.run("sync", "now").status == 0) }
        try expectHost(on: [a, b, c], port: "2201", address: "db2.internal")
    }

    @Test func aNewerVersionThatNoLongerClashesEndsTheConflictSoNoStaleCopyIsKept() throws {
        let (a, b, c) = try conflictOnB()
        try c.run("hosts", "edit", "db", "--port", "2201", "--address", "db2.internal")
        #expect(try c.run("sync", "now").status == 0)
        // B's port now agrees with the vault's: nothing clashes, and the old conflict (with A's
        // port and the old address) is no longer there to be kept with --keep remote.
        #expect(try b.run("sync", "now").stdout == "synced with folder \(vault)\n")
        for d in [a, c] { #expect(try d.run("sync", "now").status == 0) }
        try expectHost(on: [a, b, c], port: "2201", address: "db2.internal")
    }

    @Test func keepLocalAgainstAVersionThatChangedTheSameFieldAgainIsAConflictAgain() throws {
        let a = try device(), b = try device(), c = try device()
        #expect(try a.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try a.run("forward", "add", "--name", "fwd", "web", "-L", "8001:127.0.0.1:80").status == 0)
        for d in [a, b, c] { #expect(try d.run("sync", "now").status == 0) }
        try a.run("forward", "edit", "fwd", "-L", "8002:127.0.0.1:80")
        try b.run("forward", "edit", "fwd", "-L", "8003:127.0.0.1:80")
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        let id = try conflictID(b)
        #expect(try c.run("sync", "now").status == 0)
        try c.run("forward", "edit", "fwd", "-L", "8004:127.0.0.1:80")
        #expect(try c.run("sync", "now").status == 0)   // the vault moved on after B saw the conflict
        // C changed the clashing field again: keeping B's value is a new conflict against C's
        // version, never a silent overwrite of it.
        #expect(try b.run("sync", "resolve", id, "--keep", "local").status == 0)
        let again = try b.run("sync", "conflicts").stdout
        #expect(again.contains("both devices changed bindPort") && again.contains("\"bindPort\":8004"), "\(again)")
        #expect(try c.run("sync", "now").status == 0)
        #expect(try c.run("forward", "show", "fwd").stdout.contains("8004:127.0.0.1:80"))
        #expect(try b.run("sync", "resolve", try conflictID(b), "--keep", "local").status == 0)
        for d in [a, b, c] {
            #expect(try d.run("sync", "now").status == 0)
            #expect(try d.run("forward", "show", "fwd").stdout.contains("8003:127.0.0.1:80"))
            #expect(try d.run("sync", "conflicts").stdout == "no conflicts\n")
        }
    }

    @Test func keepRemoteTakesTheVaultsNewestVersion() throws {
        let (a, b, c) = try conflictOnB()
        let id = try conflictID(b)
        try c.run("hosts", "edit", "db", "--address", "db2.internal")
        #expect(try c.run("sync", "now").status == 0)
        #expect(try b.run("sync", "resolve", id, "--keep", "remote").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        try expectHost(on: [a, b, c], port: "2200", address: "db2.internal")
    }
}
