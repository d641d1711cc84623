import Foundation
import Glibc
import Testing
import TestSupport

/// Host-key trust inside the connection attempt, against OpenSSH's known_hosts.
@Suite struct TrustEndToEndTests {
    func fingerprint(_ h: SSHHarness) throws -> String {
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", h.server.directory + "/host_key.pub"])
        return String(r.stdout.split(separator: " ")[1])
    }

    @Test func unknownHostFailsClosedWithoutATerminalAndShowsTheFingerprint() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.hasPrefix("""
        The authenticity of host '[127.0.0.1]:\(h.server.port)' can't be established.
        ED25519 key fingerprint is \(try fingerprint(h)).
        Host key verification failed: cannot ask 'Trust this host key?': scene
        """))
        #expect(h.knownHosts.isEmpty, "nothing is saved when nobody was asked")
    }

    @Test func acceptAndSaveOnARealTerminalWritesAHashedEntryUsedNextTime() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "echo", "connected"], environment: h.environment)
        defer { tty.close() }
        let screen = tty.waitFor("Choose 1-3:")
        #expect(screen.contains("ED25519 key fingerprint is \(try fingerprint(h))."))
        #expect(screen.contains("2) accept and save to \(h.home)/.ssh/known_hosts"))
        tty.type("2")
        let done = tty.waitFor("[exit")
        #expect(done.contains("Warning: Permanently added '[127.0.0.1]:\(h.server.port)' (ED25519) to the list of known hosts."))
        #expect(done.contains("connected"), "the command ran; the screen was:\n\(done)")
        #expect(done.contains("[exit 0]"), "the screen was:\n\(done)")
        #expect(h.knownHosts.hasPrefix("|1|"), "saved hashed, as OpenSSH on Debian does")
        let again = try h.termhost(["exec", h.target, "--", "echo", "known"])
        #expect(again.stdout == "known\n" && again.stderr.isEmpty)
        // OpenSSH itself agrees with what was saved.
        let check = try Shell.run("/usr/bin/ssh-keygen", ["-F", "[127.0.0.1]:\(h.server.port)", "-f", h.home + "/.ssh/known_hosts"])
        #expect(check.status == 0)
    }

    @Test func rejectingOnARealTerminalRefusesAndSavesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "true"], environment: h.environment)
        defer { tty.close() }
        tty.waitFor("Choose 1-3:")
        tty.type("3")
        let done = tty.waitFor("[exit")
        #expect(done.contains("Host key verification failed: rejected by the user."))
        #expect(done.contains("[exit 255]"))
        #expect(h.knownHosts.isEmpty)
    }

    @Test func aChangedHostKeyIsRefusedWithOpenSSHsWarningAndTheOffendingLine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let other = try UserKey(in: dir.path, name: "other_host_key")
        let otherKey = other.publicLine.split(separator: " ").prefix(2).joined(separator: " ")
        _ = dir.write("home/.ssh/known_hosts", "# comment\n[127.0.0.1]:\(h.server.port) \(otherKey)\n")
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.contains("WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!"))
        #expect(r.stderr.contains(try fingerprint(h)))
        #expect(r.stderr.contains("Offending ED25519 key in \(h.home)/.ssh/known_hosts:2"))
        #expect(r.stderr.hasSuffix("Host key verification failed.\n"))
    }

    @Test func aRevokedHostKeyIsRefusedEvenWhenAlsoListedAsKnown() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        _ = dir.write("home/.ssh/known_hosts", "\(h.server.knownHostsLine)\n@revoked * \(h.server.hostPublicKey)\n")
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.contains("WARNING: REVOKED HOST KEY DETECTED!"))
        #expect(r.stderr.contains("is marked as revoked in \(h.home)/.ssh/known_hosts:2"))
    }

    @Test func hashedEntriesWrittenBySSHKeygenAreRecognised() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let hash = try Shell.run("/usr/bin/ssh-keygen", ["-H", "-f", h.home + "/.ssh/known_hosts"])
        #expect(hash.status == 0)
        #expect(h.knownHosts.hasPrefix("|1|"))
        #expect(try h.termhost(["exec", h.target, "--", "echo", "hashed"]).stdout == "hashed\n")
    }

    @Test func malformedAndMarkerLinesAreSkippedWithAWarningAndDoNotHideLaterKeys() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let ca = try UserKey(in: dir.path, name: "ca").publicLine.split(separator: " ").prefix(2).joined(separator: " ")
        _ = dir.write("home/.ssh/known_hosts", """
        @cert-authority *.example.com \(ca)
        garbage-without-a-key
        example.com ssh-ed25519 !!!notbase64!!!
        \(h.server.knownHostsLine)

        """)
        let r = try h.termhost(["exec", h.target, "--", "echo", "still-known"])
        #expect(r.stdout == "still-known\n", "\(r.stderr)")
        #expect(r.stderr.contains("\(h.home)/.ssh/known_hosts:2: malformed known_hosts line; skipped"))
        #expect(r.stderr.contains("\(h.home)/.ssh/known_hosts:3: malformed known_hosts line; skipped"))
    }
}

@Suite struct AuthenticationEndToEndTests {
    @Test func aPassphraseProtectedKeyAsksForItsPassphraseWithEchoOff() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, passphrase: "correct horse")
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "echo", "unlocked"], environment: h.environment)
        defer { tty.close() }
        #expect(tty.waitFor("Enter passphrase for key").contains("Enter passphrase for key '\(h.key.privatePath)':"))
        tty.type("correct horse")
        let done = tty.waitFor("[exit")
        #expect(done.contains("unlocked") && done.contains("[exit 0]"))
        #expect(!done.contains("correct horse"))
    }

    @Test func aPassphraseProtectedKeyWithoutATerminalFailsClosed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, passphrase: "secret")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.contains("cannot ask for the passphrase of \(h.key.privatePath)"))
    }

    /// A stock sshd accepts RSA user keys only with SHA-2 signatures (rsa-sha2-256/512): libssh2
    /// 1.11 makes them; 1.10 signs only with ssh-rsa (SHA-1), and the refusal says why.
    @Test func anRSAKeyIsAcceptedWithLibSSH2111AndItsRefusalOn110SaysWhyAndWhatWorks() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, keyType: "rsa")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo", "connected"])
        if try LibSSH2AlgorithmsEndToEndTests.has111() {
            #expect(r.status == 0 && r.stdout == "connected\n", "\(r.stderr)")
        } else {
            #expect(r.status == 255)
            #expect(r.stderr.contains("Permission denied (publickey)."))
            #expect(r.stderr.contains("An RSA key was refused: this libssh2 (1.10.0) can only sign with ssh-rsa (SHA-1), which OpenSSH 8.8 and later reject. Use an ed25519 or ECDSA key"))
        }
    }
}

/// Password and keyboard-interactive against sshd with PAM, as the user the CI script creates.
@Suite struct PasswordEndToEndTests {
    static let user = "termhost-test", password = "Termhost-Test-Pw1"
    static var available: Bool { getuid() == 0 && getpwnam(user) != nil }

    func harness(_ dir: TemporaryDirectory, _ config: String) throws -> SSHHarness {
        try SSHHarness(dir: dir, authorize: false, serverConfig: "UsePAM yes\n" + config)
    }

    @Test(.enabled(if: PasswordEndToEndTests.available)) func passwordLoginPromptsWithEchoOffAndRetries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // The config above says "PasswordAuthentication no"; sshd keeps the first value it reads,
        // so the harness's extra lines come first.
        let h = try harness(dir, "PasswordAuthentication yes\nKbdInteractiveAuthentication no\n")
        defer { h.server.stop() }
        let target = "\(Self.user)@127.0.0.1:\(h.server.port)"
        let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "id", "-un"], environment: h.environment)
        defer { tty.close() }
        #expect(tty.waitFor("password:").contains("\(Self.user)@127.0.0.1's password:"))
        tty.type("wrong")
        #expect(tty.waitFor("Permission denied, please try again.").contains("Permission denied, please try again."))
        tty.type(Self.password)
        let done = tty.waitFor("[exit")
        #expect(done.contains("\n\(Self.user)\n") || done.contains("\(Self.user)\r"), "\(done)")
        #expect(done.contains("[exit 0]"))
        #expect(!done.contains(Self.password) && !done.contains("wrong\n"))
    }

    @Test(.enabled(if: PasswordEndToEndTests.available)) func aKeyAndThenAPasswordLogInWhereTheServerWantsBoth() throws {
        // AuthenticationMethods publickey,password (a 2FA bastion): the key is taken with partial
        // success, then the password is asked for, as OpenSSH's ssh does.
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: "UsePAM yes\nPasswordAuthentication yes\nKbdInteractiveAuthentication no\n"
                               + "AuthenticationMethods publickey,password\n")
        defer { h.server.stop() }
        // sshd reads the authorized keys as the user logging in: let that user reach the file.
        for path in [dir.path, h.server.directory] { chmod(path, 0o711) }
        chmod(h.server.directory + "/authorized_keys", 0o644)
        let target = "\(Self.user)@127.0.0.1:\(h.server.port)"
        let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "id", "-un"], environment: h.environment)
        defer { tty.close() }
        #expect(tty.waitFor("password:").contains("\(Self.user)@127.0.0.1's password:"))
        tty.type(Self.password)
        let done = tty.waitFor("[exit")
        #expect(done.contains("[exit 0]") && !done.contains(Self.password), "\(done)")
        #expect(h.server.log.contains("Partial publickey for \(Self.user)") && h.server.log.contains("Accepted password for \(Self.user)"),
                "\(h.server.log)")
        // Without a terminal the second step cannot be asked, and says so.
        let r = try h.termhost(["exec", target, "--", "true"])
        #expect(r.status == 255 && r.stderr.contains("cannot ask for the password") && r.stderr.contains("has no terminal"), "\(r.output)")
    }

    @Test(.enabled(if: PasswordEndToEndTests.available)) func keyboardInteractiveShowsTheServersPromptsAndLogsIn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harness(dir, "PasswordAuthentication no\nKbdInteractiveAuthentication yes\n")
        defer { h.server.stop() }
        let target = "\(Self.user)@127.0.0.1:\(h.server.port)"
        let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "echo", "kbd-ok"], environment: h.environment)
        defer { tty.close() }
        #expect(tty.waitFor("Password:").contains("Password:"))
        tty.type(Self.password)
        let done = tty.waitFor("[exit")
        #expect(done.contains("kbd-ok") && done.contains("[exit 0]"), "\(done)")
        #expect(!done.contains(Self.password))
    }

    @Test(.enabled(if: PasswordEndToEndTests.available)) func withoutATerminalKeyboardInteractiveIsNotTriedWithEmptyAnswers() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harness(dir, "PasswordAuthentication no\nKbdInteractiveAuthentication yes\n")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", "\(Self.user)@127.0.0.1:\(h.server.port)", "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "\(Self.user)@127.0.0.1: Permission denied (publickey,keyboard-interactive).\n")
        #expect(!h.server.log.contains("Failed keyboard-interactive"), "no empty answers may reach PAM: \(h.server.log)")
    }

    @Test(.enabled(if: PasswordEndToEndTests.available)) func wrongPasswordsEndInPermissionDenied() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harness(dir, "PasswordAuthentication yes\nKbdInteractiveAuthentication no\n")
        defer { h.server.stop() }
        let target = "\(Self.user)@127.0.0.1:\(h.server.port)"
        let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "true"], environment: h.environment)
        defer { tty.close() }
        // Each prompt flushes what was typed ahead (as ssh does), so answer each one in turn.
        for attempt in 1...3 {
            tty.waitFor("password:", count: attempt)
            tty.type("nope")
        }
        let done = tty.waitFor("[exit")
        #expect(done.contains("\(Self.user)@127.0.0.1: Permission denied (publickey,password)."), "\(done)")
        #expect(done.contains("[exit 255]"))
    }
}
