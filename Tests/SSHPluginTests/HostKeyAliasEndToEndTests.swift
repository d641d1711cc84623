import Foundation
import Testing
import TestSupport

/// HostKeyAlias: the host key is looked up under the alias, not the address, in the same
/// known_hosts line OpenSSH's ssh reads for it (the alias alone, whatever the port), from a saved host
/// or from an imported ~/.ssh/config.
@Suite(.timeLimit(.minutes(2))) struct HostKeyAliasEndToEndTests {
    @Test func theKeyIsLookedUpUnderTheAliasAsSshDoes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let port = String(h.server.port)
        let known = dir.write("home/.ssh/known_hosts", "gw-alias \(h.server.hostPublicKey)\n")
        // OpenSSH's own client accepts the key through this line only with the alias.
        let ssh = try Shell.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "HostKeyAlias=gw-alias", "-o", "StrictHostKeyChecking=yes",
                                                 "-o", "UserKnownHostsFile=\(known)", "-o", "BatchMode=yes", "-i", h.key.privatePath,
                                                 "-p", port, "\(NSUserName())@127.0.0.1", "true"], environment: h.environment)
        #expect(ssh.status == 0, "ssh itself: \(ssh.output)")
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", port, "--user", NSUserName(), "--host-key-alias", "gw-alias"])
        #expect(add.status == 0, "\(add.output)")
        let r = try h.termhost(["exec", "lab", "--", "echo", "trusted"])
        #expect(r.status == 0 && r.stdout == "trusted\n", "\(r.output)")
        try h.termhost(["hosts", "edit", "lab", "--host-key-alias", ""])
        let without = try h.termhost(["exec", "lab", "--", "true"])
        #expect(without.status == 255 && without.stderr.contains("Host key verification failed"), "\(without.output)")
        let bad = try h.termhost(["hosts", "edit", "lab", "--host-key-alias", "-oops"])
        #expect(bad.status == 2 && bad.stderr.contains("may not begin with '-'"), "\(bad.output)")
    }

    @Test func anImportedHostKeyAliasIsSshGs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        _ = dir.write("home/.ssh/known_hosts", "gw-alias \(h.server.hostPublicKey)\n")
        let config = dir.write("home/.ssh/config", """
        Host lab
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(NSUserName())
        Host lab other
          HostKeyAlias gw-alias

        """)
        let g = try SshG(config: config, host: "lab", environment: h.environment)
        #expect(g.one("hostkeyalias") == "gw-alias", "\(g.output)")
        #expect(try h.termhost(["hosts", "import", config, "--yes"]).status == 0)
        #expect(try h.termhost(["hosts", "show", "lab"]).stdout.contains("\"hostKeyAlias\" : \"gw-alias\""))
        let r = try h.termhost(["exec", "lab", "--", "echo", "trusted"])
        #expect(r.status == 0 && r.stdout == "trusted\n", "\(r.output)")
    }

    /// "Accept and save" under an alias writes the alias alone (no port), which ssh then finds.
    @Test func acceptAndSaveUnderTheAliasIsTheLineSshReads() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let port = String(h.server.port)
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", port, "--user", NSUserName(), "--host-key-alias", "gw-alias"])
        let tty = try TmuxSession(command: [Paths.termhost, "exec", "lab", "--", "echo", "connected"], environment: h.environment)
        defer { tty.close() }
        let screen = tty.waitFor("Choose 1-3:")
        #expect(screen.contains("The authenticity of host 'gw-alias ([127.0.0.1]:\(port))' can't be established."), "\(screen)")
        tty.type("2")
        let done = tty.waitFor("[exit")
        #expect(done.contains("[exit 0]"), "the screen was:\n\(done)")
        let found = try Shell.run("/usr/bin/ssh-keygen", ["-F", "gw-alias", "-f", h.home + "/.ssh/known_hosts"])
        #expect(found.status == 0, "saved under the alias alone: \(found.output)")
        let ssh = try Shell.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "HostKeyAlias=gw-alias", "-o", "StrictHostKeyChecking=yes",
                                                 "-o", "UserKnownHostsFile=\(h.home)/.ssh/known_hosts", "-o", "BatchMode=yes",
                                                 "-i", h.key.privatePath, "-p", port, "\(NSUserName())@127.0.0.1", "true"], environment: h.environment)
        #expect(ssh.status == 0, "OpenSSH finds the saved line: \(ssh.output)")
    }
}
