import Foundation
import Testing
import TestSupport

/// sshd's `Banner` is shown on stderr before authentication, as OpenSSH shows it, with its
/// control characters visible and its lines and tabs kept; never with `-q` or `--json`. libssh2 1.10
/// drops the banner (only 1.11 hands it out), so there the tests check that nothing of it,
/// garbled or not, reaches the output.
@Suite struct BannerEndToEndTests {
    static let banner = "Authorized use only.\r\n\tHello \u{1b}]0;PWNED\u{07}\u{1b}[2J fake\nlast line\n"
    static let shown = "Authorized use only.\n\t" + #"Hello \033]0;PWNED\007\033[2J fake"# + "\nlast line\n"

    /// Whether the libssh2 the SSH plugin loads hands out the banner (1.11 and later).
    static func libssh2ShowsBanners() throws -> Bool {
        let version = try LoadedLibSSH2.version(of: Paths.products + "/libSSHPlugin.so")
        return !version.split(separator: ".").compactMap({ Int($0) }).lexicographicallyPrecedes([1, 11])
    }

    static func harness(_ dir: TemporaryDirectory) throws -> SSHHarness {
        let file = dir.write("banner", banner)
        return try SSHHarness(dir: dir, serverConfig: "Banner \(file)\n")
    }

    @Test func execShowsTheBannerOnStderrWithEscapesVisible() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo", "ran"])
        #expect(r.status == 0 && r.stdout == "ran\n", "\(r.output)")
        #expect(!r.output.contains("\u{1b}"), "\(r.output)")
        #expect(r.stderr == (try Self.libssh2ShowsBanners() ? Self.shown : ""), "\(r.stderr)")
    }

    @Test func sshWithACommandShowsTheBannerToo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["ssh", h.target, "echo", "ran"])
        #expect(r.status == 0 && r.stdout == "ran\n", "\(r.output)")
        #expect(r.stderr == (try Self.libssh2ShowsBanners() ? Self.shown : ""), "\(r.stderr)")
    }

    @Test func quietAndJSONShowNoBanner() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        for args in [["exec", "-q", h.target, "--", "echo", "ran"], ["ssh", "-q", h.target, "echo", "ran"],
                     ["--json", "exec", h.target, "--", "echo", "ran"]] {
            let r = try h.termhost(args)
            #expect(r.status == 0 && r.stdout == "ran\n" && r.stderr == "", "\(args): \(r.output)")
        }
    }

    /// The interactive shell: the banner comes before the remote prompt, on the terminal.
    @Test func anInteractiveShellShowsTheBannerBeforeThePrompt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "ssh", h.target], environment: h.environment, width: 200)
        defer { tty.close() }
        tty.type("echo shell-$((6*7))")
        let screen = tty.waitFor("shell-42")
        #expect(screen.contains("shell-42"), "\(screen)")
        if try Self.libssh2ShowsBanners() {
            #expect(screen.contains("Authorized use only.") && screen.contains(#"\033]0;PWNED\007\033[2J fake"#), "\(screen)")
        } else {
            #expect(!screen.contains("Authorized use only."), "\(screen)")
        }
    }
}
