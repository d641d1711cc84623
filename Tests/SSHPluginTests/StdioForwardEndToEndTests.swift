import Foundation
import Testing
import TestSupport

/// `termhost ssh -W HOST:PORT SERVER` as OpenSSH's `-W`: OpenSSH's own `ssh` reaches the test's
/// sshd with termhost as its ProxyCommand, through that same sshd.
@Suite struct StdioForwardEndToEndTests {
    @Test func openSSHConnectsThroughTermhostAsItsProxyCommand() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let proxy = "\(Paths.termhost) ssh -q -W %h:%p \(h.target)"
        let r = try Shell.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                                               "-o", "UserKnownHostsFile=\(h.home)/.ssh/known_hosts", "-o", "GlobalKnownHostsFile=/dev/null",
                                               "-o", "IdentitiesOnly=yes", "-i", h.key.privatePath, "-o", "ProxyCommand=\(proxy)",
                                               "-p", String(h.server.port), "\(NSUserName())@127.0.0.1", "echo", "through-termhost"],
                              environment: h.environment)
        #expect(r.status == 0 && r.stdout == "through-termhost\n", "\(r.output)")
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 2, "termhost's log-in, then OpenSSH's through it")
    }

    @Test func aRefusedAddressAndBadArgumentsAreSaid() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let refused = try h.termhost(["ssh", "-W", "127.0.0.1:1", h.target], stdin: "")
        #expect(refused.status == 255 && refused.stderr.contains("channel 0: open failed: ") && refused.stderr.contains("stdio forwarding failed"),
                "\(refused.output)")
        for bad in ["nowhere", "host:0", "host:65536", "::1:22", "-oProxyCommand=x:22", "[]:22"] {
            let r = try h.termhost(["ssh", "-W", bad, h.target])
            #expect(r.status == 2 && r.stderr.contains("is not HOST:PORT"), "\(bad): \(r.output)")
        }
        let withCommand = try h.termhost(["ssh", "-W", "127.0.0.1:22", h.target, "true"])
        #expect(withCommand.status == 2 && withCommand.stderr.contains("runs no command"), "\(withCommand.output)")
        let v6 = try h.termhost(["ssh", "-W", "[::1]:1", h.target], stdin: "")
        #expect(v6.status == 255 && v6.stderr.contains("stdio forwarding failed"), "a bracketed IPv6 address is taken: \(v6.output)")
    }
}
