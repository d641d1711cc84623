import Foundation
import Glibc
import Testing
import TestSupport

/// Agent forwarding, as `ssh -A`, against a real sshd and a real ssh-agent: off by default, on
/// with `-A` or a saved host's `--forward-agent yes`, off again with `-a`. The remote `ssh-add -l`
/// lists the local agent's key through the forwarded socket. Without an agent, with an agent path
/// that is not this user's socket, with a server that refuses (`AllowAgentForwarding no`) and on
/// libssh2 1.10 (which cannot accept the agent channels), a one-line warning and the command runs.
@Suite struct AgentForwardingEndToEndTests {
    /// A real ssh-agent on its own socket, holding one key that the server does not know (so it
    /// is only ever seen through forwarding).
    struct Agent {
        let socket: String
        let pid: pid_t
        let key: UserKey

        init(_ dir: TemporaryDirectory) throws {
            let path = dir.path + "/agent.sock"
            socket = path
            pid = Shell.spawnBackground("/usr/bin/ssh-agent", ["-D", "-a", path])
            guard Wait.until({ FileManager.default.fileExists(atPath: path) }) else {
                Shell.stopBackground(pid)
                throw Shell.Failure(description: "ssh-agent never made its socket")
            }
            key = try UserKey(in: dir.sub("agent-keys"), name: "forwarded")
            let add = try Shell.run("/usr/bin/ssh-add", [key.privatePath], environment: ["SSH_AUTH_SOCK": socket])
            guard add.status == 0 else { throw Shell.Failure(description: "ssh-add: \(add.output)") }
        }

        func stop() { Shell.stopBackground(pid) }

        /// `SHA256:...` of the agent's key, as `ssh-add -l` prints it.
        var fingerprint: String {
            get throws {
                let r = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", key.privatePath + ".pub"])
                return r.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "(ssh-keygen: \(r.output))"
            }
        }
    }

    /// Whether the libssh2 the SSH plugin loads accepts forwarded agent channels (1.11 and later).
    static func libssh2Forwards() throws -> Bool {
        let version = try LoadedLibSSH2.version(of: Paths.products + "/libSSHPlugin.so")
        return !version.split(separator: ".").compactMap({ Int($0) }).lexicographicallyPrecedes([1, 11])
    }

    /// The warning on libssh2 1.10, which ends the same whatever else is set.
    static let needs111 = "(the setup script builds 1.11.1); continuing without it.\n"

    /// What the remote sees of the agent: the list, or the reason there is none. One word: the
    /// remote command line is the words joined with spaces, run by the remote shell, as ssh's.
    static let listRemotely = ["--", "echo sock=${SSH_AUTH_SOCK:-unset}; ssh-add -l 2>/dev/null; echo status=$?"]

    @Test func minusAForwardsTheAgentAndTheRemoteListsItsKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let r = try h.termhost(["exec", "-A", h.target] + Self.listRemotely)
        #expect(r.status == 0, "\(r.output)")
        if try Self.libssh2Forwards() {
            let fingerprint = try agent.fingerprint
            #expect(r.stdout.contains(fingerprint) && r.stdout.contains("test-forwarded (ED25519)"), "\(r.output)")
            #expect(r.stdout.hasSuffix("status=0\n") && r.stderr == "", "\(r.output)")
        } else {
            #expect(r.stdout.hasPrefix("sock=unset\n") && r.stdout.hasSuffix("status=2\n"), "\(r.output)")
            #expect(r.stderr.hasPrefix("Warning: agent forwarding needs libssh2 1.11 or later, and termhost runs with libssh2 1.10")
                    && r.stderr.hasSuffix(Self.needs111), "\(r.stderr)")
        }
    }

    @Test func offByDefaultTheRemoteHasNoAgent() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let r = try h.termhost(["exec", h.target] + Self.listRemotely)
        #expect(r.status == 0 && r.stderr == "", "\(r.output)")
        #expect(r.stdout == "sock=unset\nstatus=2\n", "\(r.output)")
        #expect(!r.stdout.contains(try agent.fingerprint))
    }

    /// `--forward-agent yes` on a saved host turns it on for every connection; `-a` turns it off
    /// for one; `--forward-agent no` turns it off again; anything else is refused.
    @Test func aSavedHostForwardsWhenSetAndMinusATurnsItOff() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let port = String(h.server.port)
        let bad = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", port, "--forward-agent", "maybe"])
        #expect(bad.status == 2 && bad.stderr == "termhost hosts add: --forward-agent must be yes or no, not 'maybe'\n", "\(bad.output)")
        let added = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", port, "--user", NSUserName(), "--forward-agent", "yes"])
        #expect(added.status == 0, "\(added.output)")
        #expect(try h.termhost(["hosts", "show", "lab"]).stdout.contains("\"forwardAgent\" : true"))

        let forwarded = try h.termhost(["exec", "lab"] + Self.listRemotely)
        let off = try h.termhost(["exec", "-a", "lab"] + Self.listRemotely)
        #expect(off.stdout == "sock=unset\nstatus=2\n" && off.stderr == "", "\(off.output)")
        // The last of -A and -a wins, as in ssh.
        let last = try h.termhost(["exec", "-A", "-a", "lab"] + Self.listRemotely)
        #expect(last.stdout == "sock=unset\nstatus=2\n", "\(last.output)")
        let fingerprint = try agent.fingerprint
        if try Self.libssh2Forwards() {
            #expect(forwarded.status == 0 && forwarded.stdout.contains(fingerprint), "\(forwarded.output)")
        } else {
            #expect(forwarded.stdout == "sock=unset\nstatus=2\n" && forwarded.stderr.hasSuffix(Self.needs111), "\(forwarded.output)")
        }

        try h.termhost(["hosts", "edit", "lab", "--forward-agent", "no"])
        #expect(!(try h.termhost(["hosts", "show", "lab"]).stdout.contains("forwardAgent")))
        let edited = try h.termhost(["exec", "lab"] + Self.listRemotely)
        #expect(edited.stdout == "sock=unset\nstatus=2\n" && edited.stderr == "", "\(edited.output)")
    }

    /// `hosts import` takes ForwardAgent yes (and true) from ~/.ssh/config; a socket path there,
    /// which OpenSSH also accepts, is reported and left out.
    @Test func importTakesForwardAgentYes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let config = dir.write("config", """
            Host fwd
                HostName 127.0.0.1
                ForwardAgent yes
            Host plain
                HostName 127.0.0.1
                ForwardAgent no
            Host socket
                HostName 127.0.0.1
                ForwardAgent ~/.ssh/agent.sock

            """)
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("  fwd: 127.0.0.1:22 forwarding the agent\n") && r.stdout.contains("  plain: 127.0.0.1:22\n"), "\(r.stdout)")
        #expect(r.stderr == "warning: \(config):9: ForwardAgent ~/.ssh/agent.sock: only yes or no is imported " +
                "(termhost forwards the agent of SSH_AUTH_SOCK); not imported\n", "\(r.stderr)")
        #expect(try h.termhost(["hosts", "show", "fwd"]).stdout.contains("\"forwardAgent\" : true"))
        for name in ["plain", "socket"] {
            #expect(!(try h.termhost(["hosts", "show", name]).stdout.contains("forwardAgent")), "\(name)")
        }
    }

    /// sshd's `AllowAgentForwarding no`: the request is refused, a warning says so, and the
    /// command runs.
    @Test func aServerThatRefusesGetsAWarningAndTheCommandStillRuns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir, serverConfig: "AllowAgentForwarding no\n")
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let r = try h.termhost(["exec", "-A", h.target] + Self.listRemotely)
        #expect(r.status == 0 && r.stdout == "sock=unset\nstatus=2\n", "\(r.output)")
        if try Self.libssh2Forwards() {
            #expect(r.stderr.hasPrefix("Warning: the server refused agent forwarding (") &&
                    r.stderr.hasSuffix("); continuing without it.\n") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        } else {
            #expect(r.stderr.hasSuffix(Self.needs111), "\(r.stderr)")
        }
        let quiet = try h.termhost(["exec", "-q", "-A", h.target, "--", "echo", "ran"])
        #expect(quiet.status == 0 && quiet.stdout == "ran\n" && quiet.stderr == "", "\(quiet.output)")
    }

    /// No agent, or an SSH_AUTH_SOCK that is not a socket owned by this user: nothing is
    /// requested (the remote gets no socket), a warning names why, and the command runs.
    @Test func noUsableAgentWarnsAndTheCommandStillRuns() throws {
        guard try Self.libssh2Forwards() else { return }   // 1.10 warns about the version first
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let none = try h.termhost(["exec", "-A", h.target] + Self.listRemotely)
        #expect(none.status == 0 && none.stdout == "sock=unset\nstatus=2\n", "\(none.output)")
        #expect(none.stderr == "Warning: agent forwarding not requested: agent not present (SSH_AUTH_SOCK is not set).\n", "\(none.stderr)")

        let file = dir.write("not-a-socket", "x")
        h.extraEnvironment["SSH_AUTH_SOCK"] = file
        let notSocket = try h.termhost(["exec", "-A", h.target] + Self.listRemotely)
        #expect(notSocket.status == 0 && notSocket.stdout == "sock=unset\nstatus=2\n", "\(notSocket.output)")
        #expect(notSocket.stderr == "Warning: agent forwarding not requested: SSH_AUTH_SOCK '\(file)' is not a socket.\n", "\(notSocket.stderr)")

        let agent = try Agent(dir)
        defer { agent.stop() }
        let other = getuid() == 0 ? uid_t(65534) : getuid() + 1
        guard chown(agent.socket, other, gid_t.max) == 0 else { return }   // only root can give a socket away
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let foreign = try h.termhost(["exec", "-A", h.target] + Self.listRemotely)
        #expect(foreign.status == 0 && foreign.stdout == "sock=unset\nstatus=2\n", "\(foreign.output)")
        #expect(foreign.stderr == "Warning: agent forwarding not requested: SSH_AUTH_SOCK '\(agent.socket)' belongs to uid \(other), " +
                "not to you (uid \(getuid())).\n", "\(foreign.stderr)")
    }

    /// Several forwarded connections in one session, one after another and at once, each
    /// answered; the session ends normally afterwards.
    @Test func manyForwardedConnectionsInOneSession() throws {
        guard try Self.libssh2Forwards() else { return }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let script = "for i in 1 2 3 4 5; do ssh-add -l >/dev/null || echo fail; done; " +
            "for i in 1 2 3 4 5 6 7 8; do ssh-add -l >/dev/null || echo fail & done; wait; echo done"
        let r = try h.termhost(["exec", "-A", h.target, "--", script])
        #expect(r.status == 0 && r.stdout == "done\n" && r.stderr == "", "\(r.output)")
    }

    /// Only the destination gets the agent, as with ssh -A -J: a jump host (here one saved with
    /// --forward-agent yes) is asked for nothing but its tunnel.
    @Test func aJumpHostIsNeverAskedToForward() throws {
        guard try Self.libssh2Forwards() else { return }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir, serverConfig: "LogLevel DEBUG1\n")
        defer { h.server.stop() }
        let jump = try SSHServer(in: dir, authorizedKeys: [h.key.publicLine], extraConfig: "LogLevel DEBUG1")
        defer { jump.stop() }
        _ = dir.write("home/.ssh/known_hosts", h.server.knownHostsLine + "\n" + jump.knownHostsLine + "\n")
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        try h.termhost(["hosts", "add", "hop", "127.0.0.1", "--port", String(jump.port), "--user", NSUserName(), "--forward-agent", "yes"])
        let r = try h.termhost(["exec", "-A", "-J", "hop", h.target] + Self.listRemotely)
        let fingerprint = try agent.fingerprint
        // (sshd at DEBUG1 writes its debug lines to the session's stderr.)
        #expect(r.status == 0 && r.stdout.contains(fingerprint) && !r.stderr.contains("Warning"), "\(r.output)")
        #expect(h.server.log.contains("auth-agent-req@openssh.com"), "\(h.server.log)")
        #expect(jump.log.contains("Accepted publickey") && !jump.log.contains("auth-agent"), "\(jump.log)")
    }

    /// The interactive shell forwards too: `ssh -A` in a terminal.
    @Test func anInteractiveShellForwardsTheAgent() throws {
        guard try Self.libssh2Forwards() else { return }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let agent = try Agent(dir)
        defer { agent.stop() }
        h.extraEnvironment["SSH_AUTH_SOCK"] = agent.socket
        let tty = try TmuxSession(command: [Paths.termhost, "ssh", "-A", h.target], environment: h.environment, width: 200)
        defer { tty.close() }
        tty.type("ssh-add -l; echo listed-$((6*7))")
        let screen = tty.waitFor("listed-42")
        #expect(screen.contains(try agent.fingerprint), "\(screen)")
    }
}
