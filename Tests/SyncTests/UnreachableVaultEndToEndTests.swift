import Foundation
import Testing
import TestSupport

/// A vault that cannot be opened at all, on the real binary: the changes waiting for it are still
/// counted, and the error names the vault once.
@Suite struct UnreachableVaultEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.path + "/vault" }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    @Test func aVaultThatCannotBeOpenedStillCountsTheChangesWaitingForIt() throws {
        let a = TermhostDevice(plugins: plugins), b = TermhostDevice(plugins: plugins)
        for d in [a, b] { #expect(try d.run("sync", "backend", "set", "folder", vault, "--create").status == 0) }
        // A file where the folder should be (a share that did not mount over its mount point):
        // opening the vault fails before anything is read or sent.
        try FileManager.default.moveItem(atPath: vault, toPath: vault + ".away")
        #expect(FileManager.default.createFile(atPath: vault, contents: Data()))
        #expect(try a.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try a.run("hosts", "add", "db", "db.example.com").status == 0)
        let failed = try a.run("sync", "now")
        #expect(failed.status == 1)
        let error = "folder \(vault): open \(vault): Not a directory; nothing is lost: changes stay pending and the next sync retries; check that the vault is reachable"
        #expect(failed.stderr == "termhost sync: \(error)\n")
        let status = try a.run("sync", "status").stdout
        #expect(status.contains("pending changes: 2\n"), "\(status)")
        #expect(status.contains("last error: \(error)\n"), "\(status)")
        #expect(try a.run("sync", "status", "--json").stdout.contains("\"pending\":2,"))

        try FileManager.default.removeItem(atPath: vault)
        try FileManager.default.moveItem(atPath: vault + ".away", toPath: vault)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 0\n"))
        #expect(try b.run("sync", "now").status == 0)
        for host in ["web", "db"] { #expect(try b.run("hosts", "show", host).status == 0) }
    }
}
