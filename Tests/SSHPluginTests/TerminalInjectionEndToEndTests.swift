import Foundation
import Testing
import TestSupport

/// Text a server (or a config file, or the command line) supplies reaches the terminal with its
/// control characters shown, never obeyed: a keyboard-interactive prompt cannot set the window
/// title, clear the screen or draw a line of its own.
@Suite struct TerminalInjectionEndToEndTests {
    static let escapes = "Hello \u{1b}]0;PWNED\u{07}\u{1b}[2J fake"
    static let shown = #"Hello \033]0;PWNED\007\033[2J fake"#

    /// sshd names its PAM service after the name it runs as: started through a link named
    /// `termhost-kbd-N`, it reads /etc/pam.d/termhost-kbd-N, where pam_echo sends our message
    /// (OpenSSH puts PAM's messages in front of the next keyboard-interactive prompt) before
    /// the system's usual password check. The file is removed when the test ends.
    @Test(.enabled(if: PasswordEndToEndTests.available)) func aKeyboardInteractivePromptWithEscapesIsShownNotObeyed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let service = "termhost-kbd-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        let link = dir.path + "/" + service
        #expect(symlink("/usr/sbin/sshd", link) == 0)
        let message = dir.write("pam-message", Self.escapes)
        let pamFile = "/etc/pam.d/" + service
        _ = FileManager.default.createFile(atPath: pamFile, contents: Data("""
        auth required pam_echo.so file=\(message)
        @include common-auth
        @include common-account
        @include common-session-noninteractive

        """.utf8))
        defer { try? FileManager.default.removeItem(atPath: pamFile) }
        let h = try SSHHarness(dir: dir, authorize: false,
                               serverConfig: "UsePAM yes\nPasswordAuthentication no\nKbdInteractiveAuthentication yes\n",
                               sshdProgram: link)
        defer { h.server.stop() }
        let target = "\(PasswordEndToEndTests.user)@127.0.0.1:\(h.server.port)"
        let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "echo", "kbd-ok"], environment: h.environment, width: 250)
        defer { tty.close() }
        let prompt = tty.waitFor("Password:")
        // The whole prompt on one line: escapes and the newline PAM put before "Password:" shown.
        #expect(prompt.contains(Self.shown + #"\012Password:"#), "\(prompt)")
        tty.type(PasswordEndToEndTests.password)
        let done = tty.waitFor("[exit")
        #expect(done.contains("kbd-ok") && done.contains("[exit 0]"), "\(done)")
        #expect(done.contains(Self.shown), "the screen was not cleared")
    }

    /// A banner with escapes never reaches the terminal as escapes: libssh2 1.10 drops it, and
    /// on 1.11 it is shown with its control characters visible (BannerEndToEndTests).
    @Test func aBannerWithEscapesNeverReachesTheTerminal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let banner = dir.write("banner", Self.escapes + "\n")
        let h = try SSHHarness(dir: dir, serverConfig: "Banner \(banner)\n")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo", "ran"])
        #expect(r.status == 0 && r.stdout == "ran\n")
        #expect(!r.output.contains("\u{1b}"), "\(r.output)")
    }

    @Test func aHostNameWithEscapesIsShownInTheErrorMessage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", "me@bad\u{1b}]0;PWNED\u{07}\u{1b}[2Jhost", "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.hasPrefix(#"ssh: Could not resolve hostname bad\033]0;PWNED\007\033[2Jhost: "#), "\(r.stderr)")
        #expect(!r.stderr.contains("\u{1b}"))
    }

    @Test func aJumpHostNameWithANewlineCannotFakeALine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", "-J", "nowhere\nEnter passphrase for key 'x':", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(!r.stderr.contains("\nEnter passphrase"), "\(r.stderr)")
        #expect(r.stderr.contains(#"nowhere\012Enter passphrase for key 'x':"#), "\(r.stderr)")
    }
}
