import Foundation
import Glibc
import Testing
import TestSupport

/// The daemon keeps a connection after a command is done with it (ConnectionPool): ten execs
/// to one destination log in once, an SFTP listing through the transport service takes the same
/// connection, a server that went away costs one new log-in and no failed command, and the
/// idle timeout closes what is kept (0 keeps nothing). Counted on the server, from its log.
@Suite struct SharedConnectionTests {
    static func logIns(_ ssh: SSHHarness) -> Int { ssh.server.log.components(separatedBy: "Accepted publickey").count - 1 }

    @Test func tenExecsThroughTheDaemonLogInOnceAndAServerRestartCostsOneMore() throws {
        let setup = try DaemonSetup("termhost-shared", sftp: true)
        defer { setup.stop() }
        let (dir, ssh) = (setup.dir, setup.ssh)
        for i in 0..<10 {
            let r = try ssh.termhost(["exec", ssh.target, "--", "echo", "run-\(i)"])
            #expect(r.status == 0 && r.stdout == "run-\(i)\n", "\(r.output)")
        }
        #expect(Self.logIns(ssh) == 1, "one log-in for ten execs: \(ssh.server.log)")
        let listed = try ssh.sftp("ls", [ssh.remote(dir.sub("remote"))])
        #expect(listed.status == 0, "\(listed.output)")
        #expect(Self.logIns(ssh) == 1, "the SFTP listing took the same connection")
        let failing = try ssh.termhost(["exec", ssh.target, "--", "exit", "3"])
        #expect(failing.status == 3, "a command's own status is no reason to drop the connection: \(failing.output)")
        #expect(try ssh.termhost(["exec", ssh.target, "--", "true"]).status == 0)
        #expect(Self.logIns(ssh) == 1, "\(dir.hostLog)")

        // The server goes away with the kept connection: the next exec finds it dead before
        // running anything, and logs in again.
        ssh.server.crash()
        try ssh.server.restart()
        let before = Self.logIns(ssh)
        let after = try ssh.termhost(["exec", ssh.target, "--", "echo", "again"])
        #expect(after.status == 0 && after.stdout == "again\n", "\(after.output)")
        #expect(Self.logIns(ssh) == before + 1)
        // --in-process runs in the CLI, which keeps nothing.
        #expect(try ssh.termhost(["--in-process", "exec", ssh.target, "--", "true"]).status == 0)
        #expect(Self.logIns(ssh) == before + 2)
    }

    @Test func theIdleTimeoutClosesAKeptConnectionAndZeroKeepsNone() throws {
        let setup = try DaemonSetup("termhost-shared", policy: #"{ "settings": { "org.termhost.ssh": { "connectionIdleTimeout": 1 } } }"#)
        defer { setup.stop() }
        let (dir, ssh, daemon) = (setup.dir, setup.ssh, setup.daemon)
        #expect(try ssh.termhost(["exec", ssh.target, "--", "true"]).status == 0)
        // After a second unused, the daemon says goodbye: the server logs the disconnect.
        #expect(Wait.until(timeout: 30) { ssh.server.log.contains("closed by termhost") }, "\(ssh.server.log)")
        #expect(try ssh.termhost(["exec", ssh.target, "--", "true"]).status == 0)
        #expect(Self.logIns(ssh) == 2)

        daemon.stop()
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "connectionIdleTimeout": 0 } } }"#)
        try daemon.start()
        let before = Self.logIns(ssh)
        for _ in 0..<3 { #expect(try ssh.termhost(["exec", ssh.target, "--", "true"]).status == 0) }
        #expect(Self.logIns(ssh) == before + 3, "0 keeps no connection")

        daemon.stop()
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "connectionIdleTimeout": -5 } } }"#)
        try daemon.start()
        let refused = try ssh.termhost(["exec", ssh.target, "--", "true"])
        #expect(refused.status == 255 && refused.stderr.contains("connectionIdleTimeout"), "a bad value is named: \(refused.output)")
    }
}
