import Foundation
import Testing
import TestSupport

/// Two `termhost` processes of one device: the engine saves its whole state, so a sync command
/// waits for another process's sync of the same store, and runs after it, instead of having its
/// state overwritten by that sync's last save.
@Suite struct SyncDeviceLockEndToEndTests {
    let shared = TemporaryDirectory()
    var vault: String { shared.sub("vault") }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    @Test func aPauseWhileAnotherProcessSyncsWaitsForItAndIsKept() throws {
        let a = TermhostDevice(plugins: shared.sub("plugins"))
        #expect(try a.run("sync", "backend", "set", "folder", vault, "--create").status == 0)
        try a.run("hosts", "add", "web", "web.example.com")
        // Hold the device's journal lock in the vault: `sync now` reads the vault, then waits to upload.
        let lock = try JournalLock(vault: vault, device: a)
        let now = try Background(Paths.termhost, ["sync", "now"], environment: a.env)
        #expect(JournalLock.isWaited(by: now.process.processIdentifier), "sync now never waited for the journal lock")
        let pause = try Background(Paths.termhost, ["sync", "pause"], environment: a.env)
        let pauseErrors = CollectedOutput(pause.stderr)
        #expect(Wait.until { pauseErrors.text.contains("waiting for another termhost process's sync on this device to finish") || !pause.process.isRunning },
                "\(pauseErrors.text)")
        lock.release()
        now.process.waitUntilExit()
        pause.process.waitUntilExit()
        #expect(now.process.terminationStatus == 0)
        #expect(pause.process.terminationStatus == 0, "\(pauseErrors.text)")
        // The pause came after the sync's last save, so that save did not undo it.
        #expect(try a.run("sync", "status", "--json").stdout.contains(#""paused":true"#))
    }
}
