import Foundation
@testable import MetricsCore
import Testing
import TestSupport

/// The Metrics plugin, really dlopen'd by the `termhost` binary, sampling a real OpenSSH sshd
/// on this machine through the SSH plugin's transport service. The monitored host is this
/// machine, so values are checked against our own /proc.
@Suite(.serialized) struct MetricsEndToEndTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func monitorsAreAddedListedMovedPausedResumedAndRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        #expect(try h.termhost(["metrics", "add", "web1"]).stdout == "Added monitor 'web1'.\n")
        #expect(try h.termhost(["metrics", "add", "db", "--interval", "5", "--interface", "eth0"]).status == 0)
        #expect(try h.termhost(["metrics", "add", h.target]).status == 0)
        let dup = try h.termhost(["metrics", "add", "web1"])
        #expect(dup.status == 1 && dup.stderr == "termhost metrics: a monitor for 'web1' exists already (termhost metrics rm web1 first)\n")
        #expect(try h.termhost(["metrics", "move", h.target, "1"]).stdout == "Moved monitor '\(h.target)' to position 1.\n")
        #expect(try h.termhost(["metrics", "pause", "db"]).stdout == "Paused monitor 'db'.\n")
        #expect(try h.termhost(["metrics", "list"]).stdout == """
        1  \(h.target)  active  every 1 s  physical interfaces
        2  web1  active  every 1 s  physical interfaces
        3  db  paused  every 5 s  interfaces eth0

        """)
        let list = try #require(JSONSerialization.jsonObject(with: Data(try h.termhost(["--json", "metrics", "list"]).stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["host"] as? String } == [h.target, "web1", "db"])
        // A paused monitor is shown as paused, without connecting ('db' does not even resolve).
        let paused = try h.termhost(["--json", "metrics", "show", "db"])
        let pausedState = try Self.json(paused.stdout)["state"] as? String
        #expect(paused.status == 0 && pausedState == "paused")
        #expect(try h.termhost(["metrics", "resume", "db"]).stdout == "Resumed monitor 'db'.\n")
        #expect(try h.termhost(["metrics", "rm", "web1"]).stdout == "Removed monitor 'web1'.\n")
        let gone = try h.termhost(["metrics", "rm", "web1"])
        #expect(gone.status == 1 && gone.stderr == "termhost metrics: no monitor 'web1' (termhost metrics list shows them)\n")
        #expect(try h.termhost(["metrics", "list"]).stdout.split(separator: "\n").count == 2)
        #expect(try h.termhost(["metrics", "move", "db"]).status == 2)
    }

    @Test func refusedCredentialsAndAChangedHostKeyAreActionableFailures() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir, authorize: false)
        defer { h.server.stop() }
        let auth = try h.termhost(["--non-interactive", "--json", "metrics", "show", h.target])
        #expect(auth.status == 1)
        let a = try Self.json(auth.stdout)
        #expect(a["state"] as? String == "failed")
        #expect((a["reason"] as? String)?.hasPrefix("auth needed: ") == true, "\(a["reason"] ?? "")")
        // Another key for the same address: the host key changed.
        let other = try UserKey(in: dir.sub("other"), name: "host")
        _ = dir.write("home/.ssh/known_hosts", "[127.0.0.1]:\(h.server.port) \(other.publicLine.split(separator: " ").prefix(2).joined(separator: " "))\n")
        let changed = try h.termhost(["--non-interactive", "metrics", "show", h.target])
        #expect(changed.status == 1)
        #expect(changed.stdout.hasPrefix("\(h.target)  failed: host key changed: the server's host key does not match the one in known_hosts"), "\(changed.stdout)")
        #expect(changed.stdout.contains("fix ~/.ssh/known_hosts"))
        // No known_hosts entry at all, and nobody to ask: not "changed", but "not trusted yet".
        _ = dir.write("home/.ssh/known_hosts", "")
        let unknown = try h.termhost(["--non-interactive", "metrics", "show", h.target])
        #expect(unknown.status == 1)
        #expect(unknown.stdout.hasPrefix("\(h.target)  failed: host key not trusted: \(h.target) is not in known_hosts yet"), "\(unknown.stdout)")
        #expect(unknown.stdout.contains("run termhost metrics show HOST in a terminal"))
    }

    /// Counts the authentication attempts sshd refused (LogLevel VERBOSE logs each; the test
    /// support's own port probe connects too, so connections are not counted).
    static func connections(_ server: SSHServer) -> Int { server.log.components(separatedBy: "Failed publickey for").count - 1 }

    @Test func aMonitorNeedingAuthWaitsForTheUserAndRetriesOnResume() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir, authorize: false)
        defer { h.server.stop() }
        try h.termhost(["metrics", "add", h.target])
        let serve = try Background(Paths.termhost, ["metrics", "serve", "--listen", "127.0.0.1:0"], environment: h.environment)
        defer { if serve.process.isRunning { serve.process.terminate(); serve.process.waitUntilExit() } }
        let url = try #require(serve.firstLine().split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        var text = ""
        Wait.until(poll: 0.1) { text = HTTP.get(url)?.body ?? ""; return text.contains("state=\"failed\"} 1") }
        #expect(text.contains("termhost_metrics_state{host=\"\(h.target)\",state=\"failed\"} 1"), "\(text)")
        // The store is re-read every 2 s and a retryable failure is retried after 1 s, then
        // 2 s more: a window over two of each shows none of that retries a host waiting for
        // the user.
        Wait.observe(for: 4.5)
        #expect(Self.connections(h.server) == 1, "\(h.server.log)")
        // `metrics resume` from another process is the user acting: one retry, at once.
        try h.termhost(["metrics", "resume", h.target])
        var n = 1
        Wait.until(poll: 0.1) { n = Self.connections(h.server); return n >= 2 }
        #expect(n == 2)
        // Past the first retry step (1 s) and a store re-read (2 s): no retry after that one.
        Wait.observe(for: 2.5)
        #expect(Self.connections(h.server) == 2, "and then it waits again")
    }

    @Test func anUnreachableHostAndAFailingCommandAreReportedAsSuch() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // The server runs /bin/false whatever is asked: the loop never starts.
        let h = try SSHHarness.metrics(dir: dir, serverConfig: "ForceCommand /bin/false")
        defer { h.server.stop() }
        let failing = try h.termhost(["--json", "metrics", "show", h.target])
        #expect(failing.status == 1)
        let f = try Self.json(failing.stdout)
        #expect(f["state"] as? String == "failed")
        #expect((f["reason"] as? String)?.hasPrefix("command failed: the sampling loop on \(h.target) ended before its first sample") == true,
                "\(f["reason"] ?? "")")
        #expect(f["cpu"] is NSNull && f["memory"] is NSNull, "nothing sampled is null, not 0")
        // A server that refuses every session channel: the command cannot run there. That is
        // "command failed", not "unreachable" (the host answered).
        let other = TemporaryDirectory()
        defer { other.remove() }
        let noSessions = try SSHHarness.metrics(dir: other, serverConfig: "MaxSessions 0")
        defer { noSessions.server.stop() }
        let refused = try noSessions.termhost(["metrics", "show", noSessions.target])
        #expect(refused.status == 1)
        #expect(refused.stdout.hasPrefix("\(noSessions.target)  failed: command failed: "), "\(refused.stdout)")
        let closed = LoopbackListener(refusing: true)
        defer { closed.close() }
        let port = closed.port
        let started = Date()
        let unreachable = try h.termhost(["metrics", "show", "\(NSUserName())@127.0.0.1:\(port)"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stdout.hasPrefix("\(NSUserName())@127.0.0.1:\(port)  failed: unreachable: "), "\(unreachable.stdout)")
        #expect(unreachable.stdout.contains("Connection refused"), "\(unreachable.stdout)")
        #expect(Date().timeIntervalSince(started) < 20, "show answers with the first failure")
    }

    @Test func serveExposesStrictPrometheusTextAndSleepsInBackground() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["metrics", "add", h.target])
        try h.termhost(["metrics", "add", "idle", "--interval", "2"])
        try h.termhost(["metrics", "pause", "idle"])
        let serve = try Background(Paths.termhost, ["metrics", "serve", "--listen", "127.0.0.1:0"], environment: h.environment)
        defer { if serve.process.isRunning { serve.process.terminate(); serve.process.waitUntilExit() } }
        let first = serve.firstLine()
        let url = try #require(first.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }, "\(first)")
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))
        var text = ""
        Wait.until(poll: 0.3) {
            text = HTTP.get(url).flatMap { $0.status == 200 ? $0.body : nil } ?? ""
            return text.contains("termhost_metrics_up{host=\"\(h.target)\"} 1")
        }
        let p = try PrometheusText.parse(text)
        let host = ["host": h.target]
        #expect(p.value("termhost_metrics_up", host) == 1, "\(text)")
        #expect(p.value("termhost_memory_total_bytes", host) == Local.memTotalBytes)
        let ratio = try #require(p.value("termhost_cpu_usage_ratio", host))
        #expect(ratio >= 0 && ratio <= 1)
        #expect(p.families["termhost_cpu_core_usage_ratio"]?.samples.filter { $0.labels["host"] == h.target }.count == Local.coreCount)
        #expect(p.value("termhost_metrics_state", ["host": "idle", "state": "paused"]) == 1)
        #expect(p.value("termhost_memory_total_bytes", ["host": "idle"]) == nil, "a paused monitor has no values, not zeros")
        #expect(p.families.values.allSatisfy { $0.type == "gauge" && $0.help != nil })
        #expect(p.families["termhost_network_receive_bytes_per_second"]?.samples.contains { $0.labels["interface"] == "lo" } == false)
        #expect(HTTP.get(url.replacingOccurrences(of: "/metrics", with: "/"))?.status == 404)
        #expect(Local.samplerLoops(under: h.server) == 1, "one loop for the one active monitor")
        // The remote loop's process groups (sshd gives each its own): checked empty below.
        let groups = Set(Local.descendants(of: h.server.pid).filter { $0.command.contains(SamplerScript.processName) }
            .compactMap { Local.group(of: $0.pid) })
        #expect(!groups.isEmpty)

        // A client that trickles its request a byte at a time cannot hold the server: its
        // whole request gets Exporter.requestSeconds (3 s), then the others are answered.
        let port = try #require(Int(url.split(separator: ":").last?.split(separator: "/").first ?? ""))
        let slow = try #require(LoopbackListener.connect(to: port))
        defer { close(slow) }
        let started = DispatchSemaphore(value: 0)
        let trickle = Thread {
            for b in Array("GET /metrics HTTP/1.1\r\nHost: x\r\n".utf8) {
                var c = b
                if send(slow, &c, 1, Int32(MSG_NOSIGNAL)) <= 0 { break }
                started.signal()
                usleep(400_000)   // the client's pace, not a wait
            }
            started.signal()
        }
        trickle.start()
        started.wait()   // its first byte is out: the slow request is under way
        let asked = Date()
        #expect(HTTP.get(url)?.status == 200)
        #expect(Date().timeIntervalSince(asked) < 5, "answered after the slow client's deadline, not after its request")

        // NOTES §5: in background (SIGTSTP) the sampler closes its channel and connection.
        kill(serve.process.processIdentifier, SIGTSTP)
        var loops = 1
        Wait.until(poll: 0.1) { loops = Local.samplerLoops(under: h.server); return loops == 0 }
        #expect(loops == 0, "no remote sampling while in background")
        // Nothing of the loop is left on the remote side (no `sleep` holding the channel): the
        // channel's close ends the group at once, so half a second is its bound.
        var left = groups.flatMap { Local.groupMembers($0) }
        Wait.until(timeout: 0.5, poll: 0.05) { left = groups.flatMap { Local.groupMembers($0) }; return left.isEmpty }
        #expect(left.isEmpty, "\(left)")
        // It stops itself once its samplers are closed: SIGCONT before that would be lost.
        #expect(Wait.until { Local.isStopped(Int(serve.process.processIdentifier)) }, "SIGTSTP did not stop the process")
        kill(serve.process.processIdentifier, SIGCONT)
        Wait.until(poll: 0.1) { loops = Local.samplerLoops(under: h.server); return loops != 0 }
        #expect(loops == 1, "sampling resumes on foreground")
        // Removing the monitor from another process stops its sampler here.
        try h.termhost(["metrics", "rm", h.target])
        Wait.until(poll: 0.1) { loops = Local.samplerLoops(under: h.server); return loops == 0 }
        #expect(loops == 0)
        serve.process.interrupt()
        serve.process.waitUntilExit()
        #expect(serve.process.terminationStatus == 130)
    }

    @Test func theDashboardDrawsResizesAndRestoresTheTerminal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["metrics", "add", h.target])
        var env = h.environment
        env["TERM"] = "xterm-256color"
        let tmux = try TmuxSession(command: [Paths.termhost, "metrics", "watch"], environment: env, width: 120, height: 30)
        defer { tmux.close() }
        var screen = tmux.waitFor("[live]")
        #expect(screen.contains("[live]"), "\(screen)")
        screen = tmux.waitFor("Processes on \(h.target), by CPU")
        #expect(screen.contains("  CPU ["), "\(screen)")
        #expect(screen.split(separator: "\n").allSatisfy { $0.count <= 120 })
        tmux.type("m", enter: false)
        #expect(tmux.waitFor("by memory").contains("Processes on \(h.target), by memory"))
        tmux.resize(columns: 60, rows: 20)
        screen = tmux.waitFor("[Tab] host", count: 1)
        Wait.until(poll: 0.1) {
            screen = tmux.screen()
            return !screen.split(separator: "\n").contains(where: { $0.count > 60 }) && screen.contains("MEM [")
        }
        #expect(screen.split(separator: "\n").allSatisfy { $0.count <= 60 }, "\(screen)")
        #expect(screen.contains("MEM ["))
        tmux.type("q", enter: false)
        screen = tmux.waitFor("[exit 0]")
        #expect(screen.contains("[exit 0]"), "\(screen)")
        #expect(!screen.contains("MEM ["), "the alternate screen is gone: \(screen)")

        // Ctrl-C: the host's SIGINT shutdown restores the terminal too.
        let again = try TmuxSession(command: [Paths.termhost, "metrics", "watch", h.target], environment: env, width: 100, height: 24)
        defer { again.close() }
        #expect(again.waitFor("[live]").contains("[live]"))
        again.type("\u{03}", enter: false)
        screen = again.waitFor("[exit 130]")
        #expect(screen.contains("[exit 130]"), "\(screen)")
        #expect(!screen.contains("MEM ["), "\(screen)")
        // Typing now echoes again: the terminal left no-echo mode.
        again.type("echoed-again", enter: false)
        #expect(again.waitFor("echoed-again").contains("echoed-again"))
    }

    @Test func ctrlZGivesTheTerminalBackAndFgRedrawsTheDashboard() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        var env = h.environment
        env["TERM"] = "xterm-256color"
        env["PS1"] = "prompt$ "
        // An interactive shell with job control, as a person would use.
        let tmux = try TmuxSession(command: ["/bin/bash", "--norc", "--noprofile", "-i"], environment: env, width: 100, height: 24)
        defer { tmux.close() }
        _ = tmux.waitFor("prompt$")
        tmux.type("\(Paths.termhost) metrics watch \(h.target)")
        var screen = tmux.waitFor("[live]")
        #expect(screen.contains("[live]") && screen.contains("MEM ["), "\(screen)")
        tmux.type("\u{1a}", enter: false)
        screen = tmux.waitFor("Stopped")
        #expect(screen.contains("Stopped") && !screen.contains("MEM ["), "the shell's screen is back: \(screen)")
        // The terminal echoes again while the dashboard is stopped.
        tmux.type("echo typed-while-stopped")
        #expect(tmux.waitFor("typed-while-stopped", count: 2).components(separatedBy: "typed-while-stopped").count - 1 >= 2)
        tmux.type("fg")
        screen = tmux.waitFor("MEM [")
        #expect(screen.contains("MEM [") && !screen.contains("Stopped"), "redrawn on foreground: \(screen)")
        screen = tmux.waitFor("[live]")
        #expect(screen.contains("[live]"), "sampling resumes: \(screen)")
        tmux.type("q", enter: false)
        screen = tmux.waitFor("prompt$ ", count: 3)
        #expect(!screen.contains("MEM ["), "\(screen)")
    }

    @Test func remoteTextWithControlCharactersIsShownCleaned() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        // A busy process whose name (comm) holds an escape sequence and a bell.
        let evil = Process()
        evil.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        evil.arguments = ["python3", "-c", """
            import ctypes, time
            ctypes.CDLL(None).prctl(15, b"\\x1b[2Jevil\\x07", 0, 0, 0)
            end = time.time() + 20
            while time.time() < end: pass
            """]
        try evil.run()
        defer { evil.terminate(); evil.waitUntilExit() }
        #expect(Wait.until { Local.read("/proc/\(evil.processIdentifier)/comm").contains("evil") }, "the process never took its name")
        let r = try h.termhost(["metrics", "show", h.target])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("?[2Jevil?"), "\(r.stdout)")
        #expect(!r.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    @Test func anotherPluginReadsSnapshotsThroughTheCABI() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.metrics(dir: dir)
        defer { h.server.stop() }
        try Fixtures.serviceClient(source: "metrics-snapshot-plugin.c", id: "org.test.snapcheck", command: "snapcheck",
                                   requires: "org.termhost.metrics.snapshot/1", alsoRequires: ["termhost.commands/1"], in: h.plugins)
        let r = try h.termhost(["snapcheck", h.target])
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("HOSTS [\"\(h.target)\"]"), "\(r.stdout)")
        let snapshot = try #require(lines.first { $0.hasPrefix("SNAPSHOT ") }).dropFirst(9)
        let j = try Self.json(String(snapshot))
        #expect(j["host"] as? String == h.target && j["state"] as? String == "live")
        #expect((j["memory"] as? [String: Any])?["totalBytes"] as? Double == Local.memTotalBytes)
        #expect(((j["processes"] as? [String: Any])?["top"] as? [Any])?.count ?? 99 <= 20)
        #expect(lines.contains("MISSING 2 no metrics sampler for 'no-such-host' in this process"), "\(r.stdout)")
    }
}
