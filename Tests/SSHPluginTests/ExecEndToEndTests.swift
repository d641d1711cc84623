import Foundation
import Testing
import TestSupport

/// `termhost exec` against a real OpenSSH sshd on loopback.
@Suite struct ExecEndToEndTests {
    @Test func stdoutAndStderrStayApartAndTheExitStatusBecomesOurs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "sh", "-c", "'echo out; echo err >&2; exit 3'"])
        #expect(r.stdout == "out\n", "\(r.output)\n\(h.server.log)")
        #expect(r.stderr == "err\n")
        #expect(r.status == 3)
    }

    @Test func stdinIsForwardedAndBinaryDataSurvives() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let text = (0..<2000).map { "line \($0) ✓ ünïcødé\n" }.joined()
        let r = try h.termhost(["exec", h.target, "--", "cat"], stdin: text)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == text)
        let wc = try h.termhost(["exec", h.target, "wc", "-c"], stdin: text)
        #expect(wc.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(text.utf8.count))
    }

    @Test func savedHostsCanBeAddedListedUsedAndRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath])
        #expect(add.status == 0 && add.stdout == "Saved host 'lab' (\(NSUserName())@127.0.0.1:\(h.server.port)).\n")
        #expect(try h.termhost(["hosts", "list"]).stdout == "lab  \(NSUserName())@127.0.0.1:\(h.server.port)\n")
        let show = try h.termhost(["hosts", "show", "lab"])
        #expect(show.stdout.contains("\"identityFile\" : \"\(h.key.privatePath)\""))
        #expect(try h.termhost(["exec", "lab", "--", "echo", "via", "vault"]).stdout == "via vault\n")
        #expect(try h.termhost(["hosts", "rm", "lab"]).status == 0)
        let gone = try h.termhost(["exec", "lab", "--", "true"])
        #expect(gone.status == 255, "'lab' is now resolved as a host name")
        #expect(gone.stderr.hasPrefix("ssh: Could not resolve hostname lab: "))
    }

    @Test func ecdsaKeysWork() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, keyType: "ecdsa")
        defer { h.server.stop() }
        #expect(try h.termhost(["exec", h.target, "--", "echo", "ecdsa"]).stdout == "ecdsa\n")
    }

    @Test func agentKeysWork() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // Move the key out of ~/.ssh so only the agent has it.
        let agentKey = dir.path + "/agent_key"
        try FileManager.default.moveItem(atPath: h.key.privatePath, toPath: agentKey)
        try FileManager.default.removeItem(atPath: h.key.privatePath + ".pub")
        let socket = dir.path + "/agent.sock"
        let agent = Shell.spawnBackground("/usr/bin/ssh-agent", ["-D", "-a", socket])
        defer { Shell.stopBackground(agent) }
        #expect(Wait.until { FileManager.default.fileExists(atPath: socket) }, "ssh-agent never made its socket")
        let add = try Shell.run("/usr/bin/ssh-add", [agentKey], environment: ["SSH_AUTH_SOCK": socket])
        #expect(add.status == 0, "\(add.output)")
        #expect(try h.termhost(["exec", h.target, "--", "true"]).status == 255, "without the agent there is no key")
        h.extraEnvironment["SSH_AUTH_SOCK"] = socket
        let r = try h.termhost(["exec", h.target, "--", "echo", "agent"])
        #expect(r.stdout == "agent\n", "\(r.stderr)")
    }

    @Test func allMethodsRefusedSaysPermissionDeniedWithTheMethods() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, authorize: false)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "\(NSUserName())@127.0.0.1: Permission denied (publickey).\n")
    }

    @Test func connectionRefusedAndUnresolvableNamesAreReportedLikeSSH() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        h.server.stop()
        let refused = try h.termhost(["exec", h.target, "--", "true"])
        #expect(refused.status == 255)
        #expect(refused.stderr == "ssh: connect to host 127.0.0.1 port \(h.server.port): Connection refused\n")
        let unknown = try h.termhost(["exec", "nobody@no-such-host.invalid", "--", "true"])
        #expect(unknown.status == 255)
        #expect(unknown.stderr.hasPrefix("ssh: Could not resolve hostname no-such-host.invalid: "))
    }
}

/// The transport service through the C ABI, from the C example plugin (SDK/Examples/remote-c).
@Suite struct TransportServiceEndToEndTests {
    @Test func aCPluginRunsARemoteCommandThroughTheSSHService() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        _ = try Fixtures.makeExample("remote-c", in: h.plugins)
        let r = try h.termhost(["remote-run", h.target, "sh", "-c", "'echo via-service; echo warn >&2; exit 5'"])
        #expect(r.stdout == "via-service\n", "\(r.stderr)")
        #expect(r.stderr == "warn\n")
        #expect(r.status == 5)
        // Trust and authentication stay the SSH plugin's: an unknown host still fails closed.
        try FileManager.default.removeItem(atPath: h.home + "/.ssh/known_hosts")
        let untrusted = try h.termhost(["remote-run", h.target, "true"])
        #expect(untrusted.status == 255)
        #expect(untrusted.stderr.contains("Host key verification failed"))
    }
}

@Suite struct KeepaliveEndToEndTests {
    @Test func aServerThatStopsAnsweringIsDetectedAfterIntervalTimesCount() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // 2 s x 2: OpenSSH's ssh gives up after about 4 s (4.4 measured), termhost after 5 (a
        // second for libssh2's whole-second probes); counted in whole seconds, and then waiting
        // for the frozen server to close the channel, this took 8.
        try h.termhost(["hosts", "add", "frozen", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "2", "--keepalive-count", "2"])
        let bg = try Background(Paths.termhost, ["exec", "frozen", "--", "echo", "started;", "sleep", "60"], environment: h.environment)
        let p = bg.process, out = bg.stdout, err = bg.stderr
        #expect(out.fileHandleForReading.availableDataOrLine().hasPrefix("started"))
        // Freeze the server side of the connection (its per-connection processes).
        let children = try Shell.run("/usr/bin/pgrep", ["-P", String(h.server.pid)]).stdout.split(separator: "\n").map(String.init)
        for child in children { _ = try Shell.run("/bin/kill", ["-STOP", child]) }
        defer { for child in children { _ = try? Shell.run("/bin/kill", ["-KILL", child]) } }
        let start = Date()
        Wait.until(timeout: 20, poll: 0.05) { !p.isRunning }
        let elapsed = Date().timeIntervalSince(start)
        #expect(!p.isRunning)
        #expect(p.terminationStatus == 255)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "Timeout, server 127.0.0.1 not responding.\n")
        #expect(elapsed >= 4.5 && elapsed < 6.5, "dead after 2 s x 2 probes and the probe's second, took \(elapsed) s")
    }
}

@Suite struct HistoryEndToEndTests {
    @Test func onlyAuthenticatedSessionsEnterTheHistoryWithTheirStatus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName()])
        try h.termhost(["exec", "lab", "--", "true"])
        try h.termhost(["exec", "lab", "--", "sh", "-c", "'exit 4'"])
        try h.termhost(["hosts", "add", "nokey", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(), "--identity", "/nonexistent"])
        try h.termhost(["exec", "nokey", "--", "true"])   // refused: no history row
        let json = try h.termhost(["--json", "hosts", "history", "lab"]).stdout
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [[String: Any]]
        #expect(rows.map { $0["status"] as? Int } == [0, 4])
        #expect(rows.allSatisfy { $0["user"] as? String == NSUserName() })
        #expect(try h.termhost(["hosts", "history", "nokey"]).stdout == "No sessions with 'nokey' yet.\n")
    }
}

@Suite struct TimeoutEndToEndTests {
    @Test func aServerThatNeverSpeaksTimesOutWithTheSettingNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // A listener whose connections wait in the kernel's backlog: it never says a word.
        let silent = LoopbackListener()
        defer { silent.close() }
        let port = silent.port
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "connectTimeout": 1 } } }"#)
        let start = Date()
        let r = try h.termhost(["exec", "\(NSUserName())@127.0.0.1:\(port)", "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "ssh: handshake with 127.0.0.1 port \(port) failed: no answer within 1 s (connectTimeout)\n")
        #expect(Date().timeIntervalSince(start) < 10)
    }
}

@Suite struct InterruptedSessionEndToEndTests {
    @Test func aSessionEndedBySIGTERMStillEntersTheHistory() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName()])
        let bg = try Background(Paths.termhost, ["exec", "lab", "--", "echo started; sleep 60"], environment: h.environment)
        let p = bg.process, out = bg.stdout
        #expect(out.fileHandleForReading.availableDataOrLine().hasPrefix("started"))
        p.terminate()
        p.waitUntilExit()
        #expect(p.terminationStatus == 143)
        let rows = try JSONSerialization.jsonObject(with: Data(try h.termhost(["--json", "hosts", "history", "lab"]).stdout.utf8)) as! [[String: Any]]
        #expect(rows.map { $0["status"] as? Int } == [255])
    }

    @Test func aLiveServerThatIsSlowToReadAnUploadIsNotDeclaredDead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "slow", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "1", "--keepalive-count", "2"])
        let input = String(repeating: "0123456789abcdef", count: 4 * 1024 * 1024 / 16)   // 4 MiB, beyond the 2 MiB window
        // The command reads nothing for 5 s (interval x count is 2 s); the server keeps answering.
        let r = try h.termhost(["exec", "slow", "--", "sleep 5; wc -c"], stdin: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(input.utf8.count))
    }

    @Test func anUploadToAServerThatStopsReadingTimesOutInsteadOfHanging() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "frozen", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "1", "--keepalive-count", "2"])
        let bg = try Background(Paths.termhost, ["exec", "frozen", "--", "echo started; cat > /dev/null"], environment: h.environment, stdin: FileHandle(forReadingAtPath: "/dev/zero"))
        let p = bg.process, out = bg.stdout, err = bg.stderr
        #expect(out.fileHandleForReading.availableDataOrLine().hasPrefix("started"))
        let children = try Shell.run("/usr/bin/pgrep", ["-P", String(h.server.pid)]).stdout.split(separator: "\n").map(String.init)
        for child in children { _ = try Shell.run("/bin/kill", ["-STOP", child]) }
        defer { for child in children { _ = try? Shell.run("/bin/kill", ["-KILL", child]) } }
        Wait.until(timeout: 30, poll: 0.05) { !p.isRunning }
        #expect(!p.isRunning, "a frozen server must be detected during an upload too")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        #expect(p.terminationStatus == 255)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "Timeout, server 127.0.0.1 not responding.\n")
    }
}

@Suite struct TransportHandleEndToEndTests {
    /// Builds Tests/Fixtures/transport-plugin.c (`termhost tp ...`) into the harness's plugins.
    static func buildTransportPlugin(_ h: SSHHarness, _ dir: TemporaryDirectory) throws {
        try Fixtures.serviceClient(source: "transport-plugin.c", id: "org.test.transport", command: "tp",
                                   requires: "org.termhost.ssh.transport/1", in: h.plugins, defines: ["-D_DEFAULT_SOURCE"],
                                   abi: "1.1")  // it declares 1.1 and reaches 1.2's exec_bounded through TERMHOST_HAS_FIELD
    }

    @Test func aClosedHandleIsRefusedAndRefusalsAreDistinguishable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try TransportHandleEndToEndTests.buildTransportPlugin(h, dir)
        let r = try h.termhost(["tp", h.target])
        #expect(r.stdout == """
        null caller: 1
        open: 0
        out: one
        exec: 0 status 0
        stale: 2 no such SSH connection: it was closed, or the handle is not one open() returned

        """, "\(r.stderr)")
        // An untrusted host key is a refusal (TERMHOST_ERR_DENIED), not a network error.
        try FileManager.default.removeItem(atPath: h.home + "/.ssh/known_hosts")
        let denied = try h.termhost(["tp", h.target])
        #expect(denied.stdout.hasPrefix("null caller: 1\nopen: 4\n"))
    }
}


/// The transport service's bridged channels: direct-tcpip, a shell on a PTY, a remote forward.
@Suite struct TransportChannelsEndToEndTests {
    /// A loopback service that answers each connection, once it reads end-of-file, with what
    /// it read upper-cased; it serves until closed. Its thread accepts on a descriptor of its
    /// own (a dup), closed when close() shuts the socket down: accepting on the listener's
    /// number after close() could take another test's connection once the number is reused.
    static func upperCasingService() -> LoopbackListener {
        let service = LoopbackListener()
        let listening = dup(service.fd)
        Thread {
            defer { close(listening) }
            while true {
                let conn = accept(listening, nil, nil)
                if conn < 0 && errno == EINTR { continue }
                guard conn >= 0 else { return }
                var data = [UInt8](), buf = [UInt8](repeating: 0, count: 4096)
                while true { let n = read(conn, &buf, buf.count); if n <= 0 { break }; data += buf[0..<n] }
                let reply = Array(String(decoding: data, as: UTF8.self).uppercased().utf8)
                _ = reply.withUnsafeBytes { write(conn, $0.baseAddress, $0.count) }
                close(conn)
            }
        }.start()
        return service
    }

    @Test func aDirectTCPIPChannelReachesAServiceSeenFromTheServer() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try TransportHandleEndToEndTests.buildTransportPlugin(h, dir)
        // An upper-casing echo service on loopback, reached through sshd.
        let service = Self.upperCasingService()
        defer { service.close() }
        let r = try h.termhost(["tp", "tcp", h.target, String(service.port), "through the tunnel"])
        #expect(r.stdout == "got: THROUGH THE TUNNEL\n", "\(r.stderr)")
    }

    /// splice_direct_tcpip from C: a socket the caller holds is joined to a channel (initial
    /// bytes first), a refused open and an early end each reach on_done, bad arguments are refused.
    @Test func aSplicedSocketReachesAServiceAndEveryEndIsReported() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try TransportHandleEndToEndTests.buildTransportPlugin(h, dir)
        // The third connection (ended early) gets nothing back.
        let service = Self.upperCasingService()
        defer { service.close() }
        let r = try h.termhost(["tp", "splice", h.target, String(service.port), " through the splice"])
        #expect(r.stdout == """
        splice: 0
        got: [INITIAL] THROUGH THE SPLICE
        done: 0 \("")
        refused: 5 named
        client sees: 0
        ended: 0 ids differ: 1 client sees: 0
        bad: 1

        """, "\(r.output)")
    }

    @Test func aShellOnAPTYRunsAndFollowsAResize() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try TransportHandleEndToEndTests.buildTransportPlugin(h, dir)
        let r = try h.termhost(["tp", "shell", h.target])
        // Opened at 100x30, resized to 120x40 before the script asks the PTY its size.
        #expect(r.stdout == "resize: 0\nresize unknown fd: 2\nshell ok\nsize ok\n", "\(r.output)")
    }

    @Test func aRemoteForwardHandsEachAcceptedConnectionToTheCaller() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try TransportHandleEndToEndTests.buildTransportPlugin(h, dir)
        let bg = try Background(Paths.termhost, ["tp", "listen", h.target], environment: h.environment)
        let p = bg.process, out = bg.stdout
        let line = out.fileHandleForReading.availableDataOrLine()
        let port = Int(line.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(line.hasPrefix("listening ") && port > 0, "\(line)")
        // Connect to the port sshd now listens on: the plugin's callback answers.
        let fd = try #require(LoopbackListener.connect(to: port))
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 256)
        var got = [UInt8]()
        while true { let n = read(fd, &buf, buf.count); if n <= 0 { break }; got += buf[0..<n] }
        #expect(String(decoding: got, as: UTF8.self) == "hello from the forward\n")
        p.waitUntilExit()
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest == "accepted\ncancel: 0\ncancel again: 2\n")
    }
}
