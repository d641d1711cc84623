import Foundation
import Glibc
import Testing
import TestSupport

/// A -D port under a flood of idle connections and with its descriptors used up: handshakes
/// have a deadline, a rule holds at most 64 of them, and a listener out of descriptors rests
/// instead of spinning (Docs/Forwarding.md, "Limits").
@Suite struct SocksLimitsEndToEndTests {
    /// 300 idle connections, against a process allowed 200 descriptors: without the cap the
    /// descriptors run out and the real client is never served.
    @Test func idleClientsBeyondTheCapDoNotBlockARealClient() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-D", "0"], nofile: 200, environment: [:])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<300 { idle.append(Net.connectNonBlocking(port: socks)) }
        // The oldest idle clients are closed as newer ones arrive: at most 64 stay.
        #expect(Wait.until { idle.filter(isClosedByPeer).count >= 300 - 64 },
                "idle clients still open: \(idle.filter { !isClosedByPeer($0) }.count)\n\(run.output)")
        let client = try #require(LoopbackListener.connect(to: socks))
        defer { close(client) }
        #expect(socksConnect(client, port: echo.port) == 0, "\(run.output)")
        #expect(Net.echo(client, Array("through the flood".utf8)), "\(run.output)")
        _ = run.interrupt()
        // 236 clients closed, a line a second at most in the log.
        let log = (try? String(contentsOfFile: dir.path + "/state/termhost/termhost.log", encoding: .utf8)) ?? ""
        let lines = log.components(separatedBy: "closed the oldest of 64 SOCKS clients still in their handshake (the limit)").count - 1
        #expect(lines >= 1 && lines <= 10, "\(lines) lines")
    }

    @Test func anIdleClientIsClosedAfterTheHandshakeDeadline() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let run = try h.run([h.target, "-D", "0"], environment: ["TERMHOST_SOCKS_HANDSHAKE_TIMEOUT": "0.5"])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // One says nothing; one sends half a greeting and stops.
        let silent = try #require(LoopbackListener.connect(to: socks))
        defer { close(silent) }
        let half = try #require(LoopbackListener.connect(to: socks))
        defer { close(half) }
        let partial: [UInt8] = [5, 2, 0]
        _ = send(half, partial, 3, 0)
        #expect(Wait.until { isClosedByPeer(silent) && isClosedByPeer(half) }, "\(run.output)")
        _ = run.interrupt()
        let log = (try? String(contentsOfFile: dir.path + "/state/termhost/termhost.log", encoding: .utf8)) ?? ""
        #expect(log.contains("closed a SOCKS client that sent no complete request within 0.5 s"), "\(log)")
    }

    @Test func aHandshakeDeadlineOutOfRangeIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        for bad in ["0", "1e9", "nan", "-1"] {
            let run = try h.run([h.target, "-D", "0"], environment: ["TERMHOST_SOCKS_HANDSHAKE_TIMEOUT": bad])
            #expect(run.waitForExit() == 2)
            #expect(run.output == "termhost forward run: TERMHOST_SOCKS_HANDSHAKE_TIMEOUT must be a number of seconds from 0.1 to 600, not '\(bad)'\n")
        }
    }

    /// 64 descriptors in all: idle SOCKS clients use up the rest. The -D listener must rest
    /// (its line says so, and the process uses little CPU meanwhile), and once the clients
    /// leave, the -L rule beside it accepts and carries a stream.
    @Test func descriptorExhaustionPausesTheListenerInsteadOfSpinning() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-D", "0", "-L", "0:127.0.0.1:\(echo.port)"], nofile: 64,
                            environment: ["TERMHOST_SOCKS_HANDSHAKE_TIMEOUT": "600"])
        #expect(run.waitForCount(of: "active, listening on 127.0.0.1:", 2), "\(run.output)")
        let ports = run.output.components(separatedBy: "active, listening on 127.0.0.1:").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        try #require(ports.count == 2, "\(run.output)")
        let (socks, local) = (ports[0], ports[1])
        var idle: [Int32] = []
        for _ in 0..<100 { idle.append(Net.connectNonBlocking(port: socks)) }
        let line = run.waitForLine(containing: "cannot accept a connection", timeout: 15)
        #expect(line == "forward '\(h.target) (-D 0)': cannot accept a connection: Too many open files; this listener pauses 100 ms at a time until a descriptor is free (the other rules go on)", "\(run.output)")
        // Out of descriptors, with connections waiting in the backlog: a spinning loop would
        // burn a whole core; resting, it wakes ten times a second.
        let pid = run.process.processIdentifier
        let before = try #require(cpuTicks(pid))
        Wait.observe(for: 1)   // a measurement window: ten 100 ms pauses of the listener
        let after = try #require(cpuTicks(pid))
        let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))
        #expect(after - before < ticksPerSecond / 4, "used \(after - before) of \(ticksPerSecond) ticks in a second")
        // The clients leave: descriptors come back, and the other rule accepts.
        idle.forEach { close($0) }
        let data = Net.random(10_000)
        #expect(Wait.until { Net.roundTrip(port: local, data) == data }, "\(run.output)")
        _ = run.interrupt()
    }

    /// A rule name and a SOCKS destination with control characters are shown escaped.
    @Test func namesAndSocksDestinationsAreShownNotObeyed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let add = try h.termhost(["forward", "add", "--name", "evil\u{1b}[2J\nname", h.target, "-D", "0"])
        #expect(add.stdout == "Saved forward 'evil\\033[2J\\012name': \(h.target) -D 0\n", "\(add.output)")
        let list = try h.termhost(["forward", "list"])
        #expect(list.stdout.contains("evil\\033[2J\\012name"), "\(list.output)")
        #expect(!list.stdout.contains("\u{1b}"))
        let run = try h.run(["evil\u{1b}[2J\nname"])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        #expect(!run.output.contains("\u{1b}"), "\(run.output)")
        let fd = try #require(LoopbackListener.connect(to: socks))
        defer { close(fd) }
        let name = Array("no\u{1b}]0;owned\u{07}.invalid".utf8)
        #expect(socksConnect(fd, port: 80, host: name) != 0)
        _ = run.interrupt()
        let log = (try? String(contentsOfFile: dir.path + "/state/termhost/termhost.log", encoding: .utf8)) ?? ""
        #expect(log.contains("SOCKS CONNECT to no\\033]0;owned\\007.invalid:80 failed"), "\(log)")
        #expect(!log.contains("\u{1b}"))
    }
}

/// Greets with "no authentication" and asks to CONNECT to host (a name, or 127.0.0.1) and port;
/// returns the reply code, nil when there was none.
func socksConnect(_ fd: Int32, port: Int, host: [UInt8]? = nil) -> UInt8? {
    var tv = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var buf = [UInt8](repeating: 0, count: 64)
    let greeting: [UInt8] = [5, 1, 0]
    _ = send(fd, greeting, 3, 0)
    guard recv(fd, &buf, 2, Int32(MSG_WAITALL)) == 2, buf[0] == 5, buf[1] == 0 else { return nil }
    let address: [UInt8] = host.map { [3, UInt8($0.count)] + $0 } ?? [1, 127, 0, 0, 1]
    let request: [UInt8] = [5, 1, 0] + address + [UInt8(port >> 8), UInt8(port & 0xff)]
    _ = send(fd, request, request.count, 0)
    guard recv(fd, &buf, 10, Int32(MSG_WAITALL)) == 10, buf[0] == 5 else { return nil }
    return buf[1]
}

/// Whether the other end closed fd (end-of-file or reset readable now).
func isClosedByPeer(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&p, 1, 0) == 1 else { return false }
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
}

/// utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15).
func cpuTicks(_ pid: Int32) -> Int? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let u = Int(fields[11]), let s = Int(fields[12]) else { return nil }
    return u + s
}
