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
        #expect(try a.run("sync", "backend", "set", "folder", vault).status == 0)
        try a.run("hosts", "add", "web", "web.example.com")
        let deviceID = try #require(try a.run("sync", "status", "--json").stdout.firstMatch(of: /"device":"([0-9a-f]+)"/)?.1)
        // Hold the device's journal lock in the vault: `sync now` reads the vault, then waits to upload.
        let deviceDir = "\(vault)/devices/\(deviceID)"
        try FileManager.default.createDirectory(atPath: deviceDir, withIntermediateDirectories: true)
        let lock = open(deviceDir, O_RDONLY | O_DIRECTORY)
        #expect(flock(lock, LOCK_EX) == 0)
        var held = true
        defer { if held { close(lock) } }
        let now = try Background(Paths.termhost, ["sync", "now"], environment: a.env)
        let pid = now.process.processIdentifier
        let syncing = Wait.until(timeout: 30) {
            ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").split(separator: "\n")
                .contains { $0.contains("-> FLOCK") && $0.split(separator: " ").contains("\(pid)") }
        }
        #expect(syncing, "sync now never waited for the journal lock")
        let pause = try Background(Paths.termhost, ["sync", "pause"], environment: a.env)
        let pauseErrors = CollectedOutput(pause.stderr)
        #expect(Wait.until { pauseErrors.text.contains("waiting for another termhost process's sync on this device to finish") || !pause.process.isRunning },
                "\(pauseErrors.text)")
        close(lock)
        held = false
        now.process.waitUntilExit()
        pause.process.waitUntilExit()
        #expect(now.process.terminationStatus == 0)
        #expect(pause.process.terminationStatus == 0, "\(pauseErrors.text)")
        // The pause came after the sync's last save, so that save did not undo it.
        #expect(try a.run("sync", "status", "--json").stdout.contains(#""paused":true"#))
    }
}
