import Foundation
import Testing
import TestSupport

/// Symbolic links planted in a shared folder vault, on the real binary: nothing of the vault
/// is reached through one. The device's own directory made a link is refused with its path and
/// nothing is written where it points; a peer's directory made a link is reported and skipped
/// while the rest syncs.
@Suite struct FolderVaultLinksEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.path + "/vault" }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    func deviceID(_ d: TermhostDevice) throws -> String {
        let line = try d.run("sync", "status").stdout.split(separator: "\n").first { $0.hasPrefix("device: ") }
        return try #require(line.map { String($0.dropFirst("device: ".count)) })
    }

    /// Device a made the vault and synced host "web"; device b uses the vault and has not synced.
    func twoDevicesSharingAHost() throws -> (TermhostDevice, TermhostDevice) {
        let a = TermhostDevice(plugins: plugins), b = TermhostDevice(plugins: plugins)
        #expect(try a.run("sync", "backend", "set", "folder", vault, "--create").status == 0)
        #expect(try b.run("sync", "backend", "set", "folder", vault).status == 0)
        #expect(try a.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        return (a, b)
    }

    @Test func theDevicesOwnDirectoryMadeALinkIsRefusedAndNothingIsWrittenThere() throws {
        defer { shared.remove() }
        let (a, b) = try twoDevicesSharingAHost()
        let own = "\(vault)/devices/\(try deviceID(a))"

        // The directory moved where someone else decides, and a link left in its place.
        let elsewhere = shared.path + "/elsewhere"
        try FileManager.default.moveItem(atPath: own, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: own, withDestinationPath: elsewhere)
        let before = try FileManager.default.contentsOfDirectory(atPath: elsewhere).sorted()
        #expect(try a.run("hosts", "add", "db", "db.example.com").status == 0)
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(own) is a symbolic link: refused"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).sorted() == before, "nothing was written through the link")
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 1\n"))

        // Put right, it syncs what waited.
        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.moveItem(atPath: elsewhere, toPath: own)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        for host in ["web", "db"] { #expect(try b.run("hosts", "show", host).status == 0, "\(host)") }
    }

    @Test func aPeersDirectoryMadeALinkIsReportedAndTheRestSyncs() throws {
        defer { shared.remove() }
        let (a, b) = try twoDevicesSharingAHost()
        // A copy of a's journal under another name, reached through a link.
        let planted = "\(vault)/devices/planted"
        let copy = shared.path + "/copy"
        try FileManager.default.copyItem(atPath: "\(vault)/devices/\(try deviceID(a))", toPath: copy)
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: copy)

        let synced = try b.run("sync", "now")
        #expect(synced.status == 0, "\(synced.output)")
        #expect(try b.run("hosts", "show", "web").status == 0)
        let status = try b.run("sync", "status").stdout
        #expect(status.contains("quarantined: 1 record(s)") && status.contains("\(planted) is a symbolic link: refused"), "\(status)")
    }
}
