import Foundation
import Glibc
import Testing
import TermhostDaemon
import TestSupport

/// Persistent sessions surviving the network and the daemon (Docs/Daemon.md): the connection cut
/// by killing the server-side sshd processes of the session, and the daemon killed with SIGKILL.
/// With --remote-tmux the same shell comes back (a variable set before is still set).
@Suite struct PersistentSessionRecoveryTests {
    typealias Setup = PersistentSessionEndToEndTests.Setup

    /// The remote tmux servers of one test live under their own TMUX_TMPDIR (sshd's SetEnv), so
    /// the test ends exactly its own.
    final class RemoteTmux {
        let directory: String
        init(_ dir: TemporaryDirectory) {
            directory = dir.sub("remote-tmux")
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var sshdConfig: String { "SetEnv TMUX_TMPDIR=\(directory)" }
        func sessions() -> String {
            (try? Shell.run("/usr/bin/tmux", ["list-sessions", "-F", "#{session_name}"], environment: ["TMUX_TMPDIR": directory, "PATH": "/usr/bin:/bin"]).stdout) ?? ""
        }
        func killServer() {
            _ = try? Shell.run("/usr/bin/tmux", ["kill-server"], environment: ["TMUX_TMPDIR": directory, "PATH": "/usr/bin:/bin"])
        }
    }

    /// Cuts every connection the sshd serves, as a network loss does: its per-connection sshd
    /// processes die (the listener stays); what runs under them sees its terminal hang up, and
    /// the remote tmux server, in a session of its own, lives on. Only the sshd processes are
    /// killed: a tmux server may still be the child of the client that started it.
    func cutConnections(_ server: SSHServer) {
        let connections = ProcessTree.members(of: server.pid).dropFirst().filter { member in
            ((try? String(contentsOfFile: "/proc/\(member.pid)/comm", encoding: .utf8)) ?? "").hasPrefix("sshd")
        }
        for member in connections { Glibc.kill(member.pid, SIGKILL) }
        _ = ProcessTree.waitUntilGone(connections, timeout: 30)
    }

    @Test func aCutConnectionIsReconnectedAndRemoteTmuxGivesBackTheSameShell() throws {
        let dir = TemporaryDirectory("termhost-reconnect")
        let tmux = RemoteTmux(dir)
        let s = try Setup(dir: dir, serverConfig: tmux.sshdConfig)
        defer { s.close(); tmux.killServer() }
        let kept = try s.open(remoteTmux: true)
        let plain = try s.open()
        let a = try s.attach(kept), b = try s.attach(plain)
        a.type("KEPT=value-$((40+1)); echo set-$((2+3))")
        b.type("PLAIN=gone; echo set-$((3+4))")
        #expect(a.waitFor("set-5") && b.waitFor("set-7"), "\(a.text)")
        #expect(tmux.sessions().contains("termhost-\(kept)"), "the shell runs in remote tmux")

        cutConnections(s.ssh.server)
        #expect(a.waitFor("reconnecting in 1 s"), "the clients are told: \(a.text.suffix(300))")
        #expect(a.waitFor("back in remote tmux session termhost-\(kept)"), "\(a.text.suffix(300))")
        #expect(b.waitFor("this is a new shell"), "\(b.text.suffix(300))")
        // Keys sent while the remote tmux client starts may be dropped by it (tmux flushes its
        // terminal's input as it takes it over), so the command is typed until it is answered.
        #expect(Wait.until(timeout: 60, poll: 0.5) { a.type("echo kept=$KEPT"); return a.waitFor("kept=value-41", timeout: 2) },
                "the same shell: \(a.text.suffix(300))")
        #expect(Wait.until(timeout: 60, poll: 0.5) { b.type("echo plain=${PLAIN:-unset}"); return b.waitFor("plain=unset", timeout: 2) },
                "a new shell: \(b.text.suffix(300))")
        let events = try s.daemon.run("sessions", "events", kept, "--json").stdout
        #expect(events.contains(#""kind":"disconnected""#) && events.contains(#""shell":"tmux""#), "\(events)")
        #expect(s.daemon.sessionsJSON().contains(#""remoteTmux":true"#))
    }

    @Test func aSavedHostsRemoteTmuxDefaultIsTaken() throws {
        let dir = TemporaryDirectory("termhost-tmux-default")
        let tmux = RemoteTmux(dir)
        let s = try Setup(dir: dir, serverConfig: tmux.sshdConfig)
        defer { s.close(); tmux.killServer() }
        let saved = try s.ssh.termhost(["hosts", "add", "kept", "127.0.0.1", "--port", "\(s.ssh.server.port)", "--user", NSUserName(),
                                        "--remote-tmux", "yes"])
        #expect(saved.status == 0, "\(saved.output)")
        #expect(try s.ssh.termhost(["hosts", "edit", "kept", "--remote-tmux", "maybe"]).stderr.contains("--remote-tmux must be yes or no, not 'maybe'"))
        let reply = try s.client().request(#"{"op":"open","request":{"host":"kept"}}"#)
        let id = try #require((reply["session"] as? [String: Any])?["id"] as? String, "\(reply)")
        #expect(Wait.until(timeout: 30) { tmux.sessions().contains("termhost-\(id)") }, "the shell runs in remote tmux")
        #expect(s.daemon.sessionsJSON().contains(#""remoteTmux":true"#))
    }

    @Test func aRemoteTmuxSessionOutlivesADaemonKilledWithSIGKILL() throws {
        let dir = TemporaryDirectory("termhost-daemon-kill")
        let tmux = RemoteTmux(dir)
        let s = try Setup(dir: dir, serverConfig: tmux.sshdConfig)
        defer { s.close(); tmux.killServer() }
        let id = try s.open(remoteTmux: true)
        let a = try s.attach(id)
        a.type("KEPT=value-$((40+2)); echo set-$((2+3))")
        #expect(a.waitFor("set-5"))

        Glibc.kill(s.daemon.pid, SIGKILL)
        #expect(Wait.until(timeout: 30) { a.ended })
        #expect(a.reason == nil, "no last word from a killed daemon: the client knows it went away")
        #expect(tmux.sessions().contains("termhost-\(id)"), "the remote tmux session lives on")

        try s.daemon.start()
        #expect(Wait.until(timeout: 60) { s.daemon.sessionsJSON().contains(#""id":"\#(id)""#) }, "listed again: \(s.daemon.log)")
        let back = try s.attach(id)
        #expect(Wait.until(timeout: 60, poll: 0.5) { back.type("echo kept=$KEPT"); return back.waitFor("kept=value-42", timeout: 2) },
                "the same shell after a new daemon: \(back.text.suffix(300))")
        let events = try s.daemon.run("sessions", "events", id, "--json").stdout
        #expect(events.contains(#""kind":"restored""#), "\(events)")

        // Killing it ends the remote tmux session too, and the daemon forgets it.
        #expect(try s.daemon.run("sessions", "kill", id).status == 0)
        #expect(Wait.until(timeout: 30) { !tmux.sessions().contains("termhost-\(id)") })
        s.daemon.stop()
        try s.daemon.start()
        #expect(!s.daemon.sessionsJSON().contains(id))
    }
}
