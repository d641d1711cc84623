import Foundation
import Testing
import TestSupport

/// SendEnv in the daemon sends the client's variables, matched by pattern, never the daemon's
/// own: the daemon was started from another environment (termhost.environment/1, whose
/// list_names gives the client's names).
@Suite(.timeLimit(.minutes(3))) struct SendEnvInDaemonTests {
    @Test func aPatternMatchesTheClientsVariablesNotTheDaemons() throws {
        let dir = TemporaryDirectory("termhost-persist")
        defer { dir.remove() }
        let ssh = try SSHHarness(dir: dir, serverConfig: "AcceptEnv TERMHOST_T_*\n")
        defer { ssh.server.stop() }
        var daemonEnvironment = ssh.environment
        daemonEnvironment["TERMHOST_T_A"] = "the daemon's"
        daemonEnvironment["TERMHOST_T_DAEMON_ONLY"] = "the daemon's"
        let daemon = DaemonHarness(environment: daemonEnvironment)
        defer { daemon.stop(); daemon.remove() }
        try daemon.start()
        var client = ssh.environment
        client["TERMHOST_T_A"] = "the client's"
        client["TERMHOST_T_CLIENT_ONLY"] = "the client's"
        let r = try Shell.run(Paths.termhost, ["exec", "-o", "SendEnv=TERMHOST_T_*", ssh.target, "--", "env | grep ^TERMHOST_T_ | sort"],
                              environment: client)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == "TERMHOST_T_A=the client's\nTERMHOST_T_CLIENT_ONLY=the client's\n", "\(r.output)")
        #expect(daemon.log.contains("runs 'exec' in scene"), "it ran in the daemon: \(daemon.log)")
    }
}
