import Foundation
import Testing
import TestSupport

/// ProxyJump through a chain of real sshd instances on loopback.
@Suite struct JumpHostEndToEndTests {
    struct Chain {
        let h: SSHHarness
        let first: SSHServer
        let second: SSHServer
        var jump: String { "\(NSUserName())@127.0.0.1:\(first.port),\(NSUserName())@127.0.0.1:\(second.port)" }
        func stop() { h.server.stop(); first.stop(); second.stop() }
    }

    func chain(_ dir: TemporaryDirectory, trustSecond: Bool = true) throws -> Chain {
        let h = try SSHHarness(dir: dir)
        let first = try SSHServer(in: dir, authorizedKeys: [h.key.publicLine], extraConfig: "LogLevel DEBUG1")
        let second = try SSHServer(in: dir, authorizedKeys: [h.key.publicLine], extraConfig: "LogLevel DEBUG1")
        let lines = [h.server.knownHostsLine, first.knownHostsLine] + (trustSecond ? [second.knownHostsLine] : [])
        _ = dir.write("home/.ssh/known_hosts", lines.joined(separator: "\n") + "\n")
        return Chain(h: h, first: first, second: second)
    }

    @Test func aCommandRunsThroughTwoJumpHostsEachVerifiedAndAuthenticated() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let c = try chain(dir)
        defer { c.stop() }
        let r = try c.h.termhost(["exec", "-J", c.jump, c.h.target, "--", "echo", "through-the-chain"])
        #expect(r.stdout == "through-the-chain\n", "\(r.stderr)")
        #expect(r.status == 0)
        // Each jump host authenticated us and opened a direct-tcpip channel to the next hop.
        #expect(c.first.log.contains("Accepted publickey for \(NSUserName())"))
        #expect(c.first.log.contains("port \(c.second.port)"))
        #expect(c.second.log.contains("Accepted publickey for \(NSUserName())"))
        #expect(c.second.log.contains("port \(c.h.server.port)"))
        // stdin and the exit status travel through the tunnels too.
        let cat = try c.h.termhost(["exec", "-J", c.jump, c.h.target, "--", "sh", "-c", "'cat; exit 9'"], stdin: "piped\n")
        #expect(cat.stdout == "piped\n" && cat.status == 9)
    }

    @Test func anUnknownKeyOnAJumpHostFailsClosedAndNamesThatHop() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let c = try chain(dir, trustSecond: false)
        defer { c.stop() }
        let r = try c.h.termhost(["exec", "-J", c.jump, c.h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.hasPrefix("The authenticity of host '[127.0.0.1]:\(c.second.port)' can't be established."))
        #expect(!c.h.server.log.contains("Accepted publickey"), "the target is never reached past an untrusted hop")
    }

    @Test func aJumpCycleIsRefusedBeforeAnyConnection() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let c = try chain(dir)
        defer { c.stop() }
        let me = NSUserName()
        try c.h.termhost(["hosts", "add", "hop-a", "127.0.0.1", "--port", String(c.first.port), "--user", me, "--jump", "hop-b"])
        try c.h.termhost(["hosts", "add", "hop-b", "127.0.0.1", "--port", String(c.second.port), "--user", me, "--jump", "hop-a"])
        let r = try c.h.termhost(["exec", "-J", "hop-a", c.h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "ssh: jump route cycle: \(me)@127.0.0.1:\(c.h.server.port) -> \(me)@127.0.0.1:\(c.first.port) -> \(me)@127.0.0.1:\(c.second.port) -> \(me)@127.0.0.1:\(c.first.port); nothing was connected\n")
        #expect(!c.first.log.contains("Accepted publickey"), "nothing may be connected before the route is known to be sound")
    }

    @Test func aNineHopRouteIsRefusedBeforeAnyConnection() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let c = try chain(dir)
        defer { c.stop() }
        let hops = (1...9).map { "u\($0)@127.0.0.1:\(c.first.port)" }.joined(separator: ",")
        let r = try c.h.termhost(["exec", "-J", hops, c.h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "ssh: the jump route to \(c.h.target) has more than 8 hosts; nothing was connected\n")
        #expect(!c.first.log.contains("Accepted publickey"))
    }
}
