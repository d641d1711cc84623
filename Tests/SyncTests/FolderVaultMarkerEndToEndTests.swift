import Foundation
import Testing
import TestSupport

/// A folder vault exists only where it was made on purpose (`sync backend set folder PATH
/// --create`), on the real binary: a share that is not mounted is refused with the cause and
/// never becomes a new, empty vault, the changes made meanwhile wait and reach the others once
/// it is back; `/`, system directories and links owned by someone else are refused.
@Suite struct FolderVaultMarkerEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    /// The mount point; the share's files live in `share` and are "mounted" by moving them here.
    var vault: String { shared.path + "/mnt/vault" }
    var share: String { shared.path + "/share" }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    func unmount() throws {
        try FileManager.default.moveItem(atPath: vault, toPath: share)
        try FileManager.default.createDirectory(atPath: vault, withIntermediateDirectories: false)   // the empty mount point
    }

    func mount() throws {
        try FileManager.default.removeItem(atPath: vault)
        try FileManager.default.moveItem(atPath: share, toPath: vault)
    }

    @Test func aShareThatIsNotMountedIsRefusedAndADeleteMadeMeanwhileIsNotLost() throws {
        defer { shared.remove() }
        let a = TermhostDevice(plugins: plugins), b = TermhostDevice(plugins: plugins)
        _ = shared.sub("mnt")
        let made = try a.run("sync", "backend", "set", "folder", vault, "--create")
        #expect(made.status == 0 && made.stdout.contains("(a new vault)"), "\(made.output)")
        let joined = try b.run("sync", "backend", "set", "folder", vault)
        #expect(joined.status == 0 && !joined.stdout.contains("new vault"), "\(joined.output)")
        #expect(try a.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try a.run("hosts", "add", "db", "db.example.com").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "show", "web").status == 0)

        try unmount()
        #expect(try b.run("hosts", "rm", "web").status == 0)
        let refused = try b.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("no vault at \(vault): is the share mounted?"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: vault).isEmpty, "nothing was written at the mount point")
        let status = try b.run("sync", "status").stdout
        #expect(status.contains("pending changes: 1\n"), "\(status)")
        #expect(status.contains("is the share mounted?"), "\(status)")

        try mount()
        #expect(try b.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("hosts", "show", "web").status != 0, "the delete made while the share was away reached the other device")
        #expect(try a.run("hosts", "show", "db").status == 0)
        #expect(try b.run("sync", "status").stdout.contains("pending changes: 0\n"))
    }

    @Test func aFolderWithoutAVaultIsNotMadeOneWithoutCreate() throws {
        defer { shared.remove() }
        let a = TermhostDevice(plugins: plugins)
        let missing = shared.path + "/not/mounted/vault"
        let set = try a.run("sync", "backend", "set", "folder", missing)
        #expect(set.status == 1)
        #expect(set.stderr.contains("no vault at \(missing): is the share mounted?") && set.stderr.contains("--create"), "\(set.stderr)")
        #expect(!FileManager.default.fileExists(atPath: shared.path + "/not"), "nothing was created")
        #expect(try a.run("sync", "backend", "show").stdout != "folder \(missing)\n")
    }

    @Test(arguments: ["/", "/etc", "/etc/termhost-vault", "/usr/share/vault", "/proc/self", "/tmp"])
    func aSystemDirectoryIsRefused(path: String) throws {
        defer { shared.remove() }
        let a = TermhostDevice(plugins: plugins)
        let set = try a.run("sync", "backend", "set", "folder", path, "--create")
        #expect(set.status == 2)
        #expect(set.stderr.contains("is a system directory, not a place for a vault"), "\(set.stderr)")
    }

    @Test func aLinkToASystemDirectoryOrOwnedBySomeoneElseIsRefused() throws {
        defer { shared.remove() }
        let a = TermhostDevice(plugins: plugins)
        let toRoot = shared.path + "/to-root"
        try FileManager.default.createSymbolicLink(atPath: toRoot, withDestinationPath: "/")
        let viaRoot = try a.run("sync", "backend", "set", "folder", toRoot, "--create")
        #expect(viaRoot.status == 2 && viaRoot.stderr.contains("\(toRoot) resolves to /: / is a system directory"), "\(viaRoot.stderr)")

        // Another user's link (root can give one away; anyone else cannot make one to test).
        guard getuid() == 0, let nobody = getpwnam("nobody") else { return }
        try FileManager.default.createDirectory(atPath: shared.path + "/elsewhere", withIntermediateDirectories: false)
        let link = shared.path + "/theirs"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: shared.path + "/elsewhere")
        #expect(lchown(link, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0)
        let viaTheirs = try a.run("sync", "backend", "set", "folder", link + "/vault", "--create")
        #expect(viaTheirs.status == 2, "\(viaTheirs.output)")
        #expect(viaTheirs.stderr.contains("\(link) is a symbolic link owned by uid \(nobody.pointee.pw_uid)"), "\(viaTheirs.stderr)")
        #expect(!FileManager.default.fileExists(atPath: shared.path + "/elsewhere/vault"))

        // Behind a link of the user's own (review finding: only the path as written was looked at).
        let mine = shared.path + "/mine"
        try FileManager.default.createSymbolicLink(atPath: mine, withDestinationPath: "theirs/sub")
        let viaMine = try a.run("sync", "backend", "set", "folder", mine + "/vault", "--create")
        #expect(viaMine.status == 2, "\(viaMine.output)")
        #expect(viaMine.stderr.contains("\(link) is a symbolic link owned by uid \(nobody.pointee.pw_uid), not by you or root (reached through the links of \(mine)/vault)"),
                "\(viaMine.stderr)")
        #expect(!FileManager.default.fileExists(atPath: shared.path + "/elsewhere/sub"))
    }
}
