import Foundation
import Testing
import TermhostLoader
import TermhostRuntime
import TestSupport

/// Plugin files that someone other than root or the invoking user could have written are
/// refused (OpenSSH's safe_path rule), checked on the descriptor that is then loaded.
@Suite struct UnsafePermissionsTests {
    func inspect(_ dir: TemporaryDirectory, _ entries: [PluginSearchPath.Entry]) -> Inspection {
        var i = Inspection.run(options(dir, plugins: entries), probe: true)
        i.closeDescriptors()
        return i
    }

    @Test func aPluginDirectoryOthersCanWriteIsRefusedAndTheOthersStillLoad() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let open = dir.sub("open"), safe = dir.sub("safe")
        let bad = try Fixtures.cPlugin(in: open, dirName: "p", id: "org.test.open", defines: ["COMMAND_NAME=\"open\""])
        try Fixtures.cPlugin(in: safe, dirName: "q", id: "org.test.safe", defines: ["COMMAND_NAME=\"safe\""])
        chmod(bad.directory, 0o777)
        let i = inspect(dir, [.init(directory: open, origin: .environment), .init(directory: safe, origin: .environment)])
        let r = i.records.first { $0.directory == bad.directory }
        #expect(r?.failure == .unsafePermissions("directory \(bad.directory) is writable by its group and others (mode 0777); refused: plugin files and every directory above them must be owned by root or by you and writable by no one else"))
        #expect(r?.probe == nil, "nothing of a refused plugin runs, not even in the probe")
        #expect(i.record("org.test.safe")?.failure == nil)
        #expect(i.resolution.commandOwners["safe"] != nil && i.resolution.commandOwners["open"] == nil)
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root (CI runs the suite as root)"))
    func aLibraryOwnedByAnotherUserIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.nobody")
        #expect(chown(p.library, 65534, 65534) == 0)
        let r = inspect(dir, [.init(directory: dir.path + "/plugins", origin: .environment)]).record("org.test.nobody")
        #expect(r?.failure?.description.hasPrefix("\(p.library) is owned by uid 65534") == true, "\(String(describing: r?.failure))")
        #expect(r?.failure?.description.contains("not by root or by you (uid 0 (root)); refused") == true)
    }

    @Test func aLibraryWritableByItsGroupIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.groupw")
        chmod(p.library, 0o775)
        let r = inspect(dir, [.init(directory: dir.path + "/plugins", origin: .environment)]).record("org.test.groupw")
        #expect(r?.failure?.description.hasPrefix("\(p.library) is writable by its group (mode 0775); refused") == true, "\(String(describing: r?.failure))")
    }

    @Test func aStickyDirectoryLikeTmpAboveThePluginIsAccepted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // Like /tmp: world-writable with the sticky bit. Others cannot rename what is ours in it.
        let shared = dir.sub("shared")
        chmod(shared, 0o1777)
        let plugins = shared + "/mine"
        try Fixtures.cPlugin(in: plugins, dirName: "p", id: "org.test.sticky")
        let r = inspect(dir, [.init(directory: plugins, origin: .environment)]).record("org.test.sticky")
        #expect(r?.failure == nil, "\(String(describing: r?.failure))")
    }

    @Test func aSymlinkedLibraryIsCheckedWhereItPoints() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.linked")
        let elsewhere = dir.sub("elsewhere")
        try FileManager.default.moveItem(atPath: p.library, toPath: elsewhere + "/libp.so")
        try FileManager.default.createSymbolicLink(atPath: p.library, withDestinationPath: elsewhere + "/libp.so")
        #expect(inspect(dir, [.init(directory: dir.path + "/plugins", origin: .environment)]).record("org.test.linked")?.failure == nil,
                "a distributor's symbolic link is followed")
        chmod(elsewhere, 0o777)
        let r = inspect(dir, [.init(directory: dir.path + "/plugins", origin: .environment)]).record("org.test.linked")
        #expect(r?.failure?.description.hasPrefix("directory \(elsewhere) is writable by its group and others (mode 0777)") == true,
                "\(String(describing: r?.failure))")
    }
}
