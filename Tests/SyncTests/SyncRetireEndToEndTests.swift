import Foundation
import TermhostServices
import Testing
import TestSupport

/// Runtime state built from a record another device replaced is retired in a live process
/// (`termhost.sync.applying`): device A runs a long command next to a real sshd and syncs every
/// second (the sync loop); device B, another data directory on the same vault folder, edits the
/// saved host and runs `sync now`. A second sshd is the host's new route.
@Suite(.serialized) struct SyncRetireEndToEndTests {
    let dir = TemporaryDirectory()
    let shared = TemporaryDirectory()
    let h: SSHHarness
    /// The route the host is moved to: another sshd that trusts the same key.
    let second: SSHServer
    let b: TermhostDevice

    init() throws {
        h = try SSHHarness(dir: dir)
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: h.plugins)
        _ = try Fixtures.bundle("libSyncPlugin.so", as: "org.termhost.sync", in: h.plugins)
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.sync": { "interval": 1 } } }"#)
        second = try SSHServer(in: TemporaryDirectory(), authorizedKeys: [h.key.publicLine])
        _ = dir.write("home/.ssh/known_hosts", h.server.knownHostsLine + "\n" + second.knownHostsLine + "\n")
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
        b = TermhostDevice(plugins: shared.sub("plugins"))
        let vault = shared.sub("vault")
        for set in [try h.termhost(["sync", "backend", "set", "folder", vault, "--create"]), try b.run("sync", "backend", "set", "folder", vault, "--create")] {
            #expect(set.status == 0, "\(set.output)")
        }
        for name in ["web", "other"] {
            let added = try h.termhost(["hosts", "add", name, "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                        "--identity", h.key.privatePath])
            #expect(added.status == 0, "\(added.output)")
        }
        #expect(try h.termhost(["sync", "now"]).status == 0)
        #expect(try b.run("sync", "now").status == 0)
    }

    func stop(_ run: Running) {
        kill(run.process.processIdentifier, SIGKILL)
        run.process.waitUntilExit()
        h.server.stop()
        second.stop()
    }

    /// B moves the host to the second sshd.
    func moveWebOnB() throws {
        #expect(try b.run("hosts", "edit", "web", "--port", String(second.port)).status == 0)
        #expect(try b.run("sync", "now").status == 0)
    }

    @Test func aRunningForwardStopsAndStartsAgainOverTheNewRoute() throws {
        let added = try h.termhost(["forward", "add", "--name", "fwd", "web", "-L", "0:127.0.0.1:\(h.server.port)"])
        #expect(added.status == 0, "\(added.output)")
        let run = try Running(["forward", "run", "fwd"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { run.output.contains("active, listening on 127.0.0.1:") }, "\(run.output)")
        try moveWebOnB()
        #expect(Wait.until { run.output.components(separatedBy: "active, listening on 127.0.0.1:").count == 3 }, "\(run.output)")
        #expect(run.output.contains("forward 'fwd': stopped: host 'web' was changed on another device (sync)\n"), "\(run.output)")
        let port = try #require(run.output.components(separatedBy: "active, listening on 127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) })
        // Through the restarted forward: the second sshd opened the channel, and sshd's banner comes back.
        let fd = try #require(LoopbackListener.connect(to: port))
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, buffer.count)
        #expect(n > 0 && String(decoding: buffer[0..<max(n, 0)], as: UTF8.self).hasPrefix("SSH-2.0-"))
        #expect(Wait.until { second.log.contains("Accepted publickey") }, "\(second.log)")
        #expect(run.process.isRunning)
    }

    @Test func aRunningRuleEditedElsewhereRestartsAsEditedAndStopsForGoodWhenRemoved() throws {
        #expect(try h.termhost(["forward", "add", "--name", "fwd", "web", "-L", "0:127.0.0.1:\(h.server.port)"]).status == 0)
        #expect(try h.termhost(["sync", "now"]).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        let run = try Running(["forward", "run", "fwd"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { run.output.contains("active, listening on 127.0.0.1:") }, "\(run.output)")
        #expect(try b.run("forward", "edit", "fwd", "-L", "0:127.0.0.1:\(second.port)").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(Wait.until { run.output.contains("forward 'fwd': starting (web -L 0:127.0.0.1:\(second.port))") }, "\(run.output)")
        #expect(run.output.contains("forward 'fwd': stopped: rule 'fwd' was changed on another device (sync)\n"), "\(run.output)")
        #expect(Wait.until { run.output.components(separatedBy: "active, listening on 127.0.0.1:").count == 3 }, "\(run.output)")
        #expect(try b.run("forward", "rm", "fwd").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        // Its only rule gone, the run has nothing left to do and ends.
        #expect(Wait.until(timeout: 120) { !run.process.isRunning }, "\(run.output)")
        #expect(run.output.hasSuffix("forward 'fwd': stopped: rule 'fwd' was removed on another device (sync)\n"), "\(run.output)")
    }

    @Test func aSessionToAHostWhoseRouteChangedIsClosedWithTheReason() throws {
        let run = try Running(["exec", "web", "--", "sleep", "120"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(h.server.log)")
        try moveWebOnB()
        #expect(Wait.until(timeout: 120) { !run.process.isRunning }, "\(run.output)")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 255)
        #expect(run.output == "termhost: host 'web' was changed on another device (sync); the connection was closed\n")
    }

    @Test func aSessionLoggedInAsAnIdentityChangedElsewhereIsClosed() throws {
        #expect(try h.termhost(["identities", "add", "deploy", "--user", NSUserName(), "--key", h.key.privatePath]).status == 0)
        #expect(try h.termhost(["hosts", "edit", "web", "--use-identity", "deploy"]).status == 0)
        #expect(try h.termhost(["sync", "now"]).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        let run = try Running(["exec", "web", "--", "sleep", "120"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(h.server.log)")
        #expect(try b.run("identities", "edit", "deploy", "--key", b.dir.write("id_other", "not a key\n")).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(Wait.until(timeout: 120) { !run.process.isRunning }, "\(run.output)")
        #expect(run.output == "termhost: host 'web' logs in as identity 'deploy', which was changed on another device (sync); the connection was closed\n")
    }

    @Test func aSessionThroughAJumpHostChangedElsewhereIsClosed() throws {
        // web through other: the second sshd, then the first.
        #expect(try h.termhost(["hosts", "edit", "other", "--port", String(second.port)]).status == 0)
        #expect(try h.termhost(["hosts", "edit", "web", "--jump", "other"]).status == 0)
        #expect(try h.termhost(["sync", "now"]).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        let run = try Running(["exec", "web", "--", "sleep", "120"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(run.output)\n\(h.server.log)")
        #expect(try b.run("hosts", "edit", "other", "--port", String(h.server.port)).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(Wait.until(timeout: 120) { !run.process.isRunning }, "\(run.output)")
        #expect(run.output == "termhost: host 'web' goes through jump host 'other', which was changed on another device (sync); the connection was closed\n")
    }

    @Test func aTransferToAHostWhoseRouteChangedPausesResumably() throws {
        _ = try Fixtures.sftpPlugin(in: h.plugins)
        let source = dir.write("big", String(repeating: "0123456789abcdef", count: 256 * 1024))   // 4 MiB
        let target = dir.sub("downloads")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // 200 kbit/s: a minute or more for the file, so the change arrives while it runs.
        let run = try Running(["sftp", "get", "-l", "200", "web:\(source)", target], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { ((try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []).count == 1 }, "\(run.output)")
        try moveWebOnB()
        #expect(Wait.until(timeout: 120) { !run.process.isRunning }, "\(run.output)")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 1)
        #expect(run.output.contains("paused: host 'web' was changed on another device (sync)"), "\(run.output)")
        let paused = try h.termhost(["sftp", "paused"])
        #expect(paused.stdout.hasPrefix("download web:\(source) -> \(target)/big: "), "\(paused.output)")
        // Resumed over the new route.
        let resumed = try h.termhost(["sftp", "get", "--resume", "web:\(source)", target])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(FileManager.default.contentsEqual(atPath: source, andPath: target + "/big"))
        #expect(second.log.contains("Accepted publickey"))
    }

    @Test func aLiveMonitorOfAHostWhoseRouteChangedReconnectsToTheNewRoute() throws {
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: h.plugins)
        #expect(try h.termhost(["metrics", "add", "web"]).status == 0)
        let listen = LoopbackListener(refusing: true)
        let port = listen.port
        listen.close()
        let run = try Running(["metrics", "serve", "--listen", "127.0.0.1:\(port)"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(run.output)")
        try moveWebOnB()
        // The sampler's connection is long-lived: only a reconnect reaches the second sshd.
        #expect(Wait.until(timeout: 120) { second.log.contains("Accepted publickey") }, "\(run.output)")
        #expect(run.process.isRunning)
    }

    @Test func anEditThatLeavesTheRouteAloneClosesNothing() throws {
        let run = try Running(["exec", "web", "--", "sleep", "120"], environment: h.environment)
        defer { stop(run) }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(h.server.log)")
        #expect(try b.run("hosts", "edit", "web", "--tag", "blue").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        // A's own store file: a termhost process started to look could sync by itself.
        let store = try SQLiteStore(path: dir.sub("data") + "/termhost/termhost.db")
        #expect(Wait.until {
            (try? store.get(namespace: "org.termhost.ssh", collection: "hosts", key: "web"))
                .map { String(decoding: $0, as: UTF8.self).contains("blue") } ?? false
        })
        // A later route change of another host is handled after the tag edit (one queue, in
        // order): once A logs it, the tag edit was handled too.
        #expect(try b.run("hosts", "edit", "other", "--port", String(second.port)).status == 0)
        #expect(try b.run("sync", "now").status == 0)
        let log = dir.sub("state") + "/termhost/termhost.log"
        #expect(Wait.until { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("host 'other' was changed on another device (sync)") })
        #expect(run.process.isRunning, "\(run.output)")
        #expect(!((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("host 'web' was changed"))
    }
}

/// A `termhost` command running in the background, its stdout and stderr collected together.
final class Running: @unchecked Sendable {
    let process: Process
    private let lock = NSLock()
    private var text = ""

    init(_ args: [String], environment: [String: String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.termhost)
        process.arguments = args
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        out.fileHandleForReading.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            lock.lock(); text += String(decoding: chunk, as: UTF8.self); lock.unlock()
        }
    }

    var output: String { lock.lock(); defer { lock.unlock() }; return text }
}
