import Foundation
import Testing
import TestSupport

/// known_hosts files as they are found in the wild (any bytes, CRLF, no final newline), files
/// that cannot be read (fail closed), and saving into them safely; all through the real binary
/// against a real sshd.
@Suite struct KnownHostsFileEndToEndTests {
    func writeBytes(_ path: String, _ bytes: [UInt8]) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    var knownHostsPath: (SSHHarness) -> String { { $0.home + "/.ssh/known_hosts" } }

    @Test func aLatin1CommentDoesNotHideARevokedKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        // "café" in Latin-1: one byte (0xE9) that is not UTF-8.
        writeBytes(knownHostsPath(h), Array("# caf".utf8) + [0xe9] + Array("\n@revoked * \(h.server.hostPublicKey)\n".utf8))
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.contains("WARNING: REVOKED HOST KEY DETECTED!"), "\(r.stderr)")
        #expect(r.stderr.contains("is marked as revoked in \(h.home)/.ssh/known_hosts:2"))
    }

    @Test func crlfLinesLeadingBlanksAndAnUnreadableLineStillLetTheRestApply() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        var bytes: [UInt8] = Array(" \t# a comment with any bytes: ".utf8) + [0xff, 0x1b] + Array("[2J\r\n".utf8)
        bytes += Array("\r\n".utf8)
        bytes += Array("example.org ssh-ed".utf8) + [0xff] + Array("25519 AAAA\r\n".utf8)
        // CRLF and no comment after the key: the \r must not become part of the base64.
        bytes += Array("\t [127.0.0.1]:\(h.server.port)\t\(h.server.hostPublicKey)\r\n".utf8)
        writeBytes(knownHostsPath(h), bytes)
        let r = try h.termhost(["exec", h.target, "--", "echo", "still-known"])
        #expect(r.stdout == "still-known\n", "\(r.stderr)")
        #expect(r.stderr.contains("\(h.home)/.ssh/known_hosts:3: key type ssh-ed\\37725519 does not match the key data; line skipped"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("\u{1b}"))
    }

    @Test func aFileOfManyBadLinesShowsTwentyWarningsAndACount() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        _ = dir.write("home/.ssh/known_hosts", String(repeating: "garbage\n", count: 1000) + h.server.knownHostsLine + "\n")
        let r = try h.termhost(["exec", h.target, "--", "echo", "known"])
        #expect(r.stdout == "known\n", "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 21, "\(r.stderr)")
        #expect(lines.last?.hasSuffix("warning: \(h.home)/.ssh/known_hosts: 980 more lines skipped (not shown)") == true, "\(r.stderr)")
    }

    /// Off port 22, a key listed for the bare host name is known, as ssh finds it ("checking
    /// without port identifier"); a changed key under the bare name is not a changed key here.
    @Test func aKeyListedWithoutThePortIsKnownOnAnyPort() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        writeBytes(knownHostsPath(h), Array("127.0.0.1 \(h.server.hostPublicKey)\n".utf8))
        let r = try h.termhost(["exec", h.target, "--", "echo", "known"])
        #expect(r.status == 0 && r.stdout == "known\n" && r.stderr.isEmpty, "\(r.output)")
        let other = try UserKey(in: dir.sub("other"), name: "other", type: "ed25519")
        writeBytes(knownHostsPath(h), Array("127.0.0.1 \(other.publicLine)\n".utf8))
        let unknown = try h.termhost(["exec", h.target, "--", "true"])
        #expect(unknown.status == 255 && unknown.stderr.contains("can't be established"), "\(unknown.output)")
    }

    @Test func negatedAndWildcardPatternsAreHonoured() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        // Both names negated: ssh looks the host up as [127.0.0.1]:PORT, then as 127.0.0.1.
        _ = dir.write("home/.ssh/known_hosts", "*,![127.0.0.1]:\(h.server.port),!127.0.0.1 \(h.server.hostPublicKey)\n")
        let negated = try h.termhost(["exec", h.target, "--", "true"])
        #expect(negated.status == 255)
        #expect(negated.stderr.contains("The authenticity of host '[127.0.0.1]:\(h.server.port)' can't be established."))
        _ = dir.write("home/.ssh/known_hosts", "other.example,[127.0.0.?]:* \(h.server.hostPublicKey)\n")
        #expect(try h.termhost(["exec", h.target, "--", "echo", "wild"]).stdout == "wild\n")
    }

    func refusal(_ h: SSHHarness, _ reason: String) -> String {
        """
        ssh: cannot read the known hosts file \(h.home)/.ssh/known_hosts: \(reason).
        Host key verification failed: termhost does not connect while a known hosts file it checks cannot be read \
        (a revoked or changed key in it would go unnoticed).

        """
    }

    /// On a terminal, where an unknown key would be offered "accept once", nothing is offered.
    @Test func aKnownHostsFileThatIsADirectoryFailsClosedEvenOnATerminal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        _ = dir.sub("home/.ssh/known_hosts")
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == refusal(h, "it is a directory"))
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "true"], environment: h.environment, width: 250)
        defer { tty.close() }
        let done = tty.waitFor("[exit")
        #expect(done.contains("[exit 255]"))
        #expect(done.contains("cannot read the known hosts file \(h.home)/.ssh/known_hosts: it is a directory."))
        #expect(!done.contains("accept once"))
    }

    @Test func aFIFOInPlaceOfKnownHostsFailsClosedWithoutHanging() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        #expect(mkfifo(knownHostsPath(h), 0o600) == 0)
        let r = try h.termhost(["exec", h.target, "--", "true"], timeout: 20)
        #expect(r.status == 255)
        #expect(r.stderr == refusal(h, "it is not a regular file"))
    }

    @Test func aKnownHostsFileOverTheSizeLimitFailsClosed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // The trusted line first, then a sparse tail: one byte over 64 MiB, almost no disk.
        let fd = open(knownHostsPath(h), O_WRONLY)
        #expect(fd >= 0 && ftruncate(fd, 64 << 20 + 1) == 0)
        close(fd)
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == """
        ssh: the known hosts file \(h.home)/.ssh/known_hosts is 67108865 bytes, more than termhost reads (64 MiB, 67108864 bytes).
        Host key verification failed: remove stale entries (ssh-keygen -R HOST -f FILE) to bring it under the limit.

        """)
    }

    @Test func acceptAndSaveAfterALastLineWithoutNewlineStartsANewLineAndKeepsTheMode() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let path = knownHostsPath(h)
        _ = dir.write("home/.ssh/known_hosts", "# the last line has no newline")
        chmod(path, 0o644)
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "echo", "connected"], environment: h.environment)
        defer { tty.close() }
        tty.waitFor("Choose 1-3:")
        tty.type("2")
        let done = tty.waitFor("[exit")
        #expect(done.contains("connected") && done.contains("[exit 0]"), "\(done)")
        let lines = h.knownHosts.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[0] == "# the last line has no newline" && lines[1].hasPrefix("|1|") && lines[2].isEmpty,
                "\(h.knownHosts)")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o7777 == 0o644)
        let check = try Shell.run("/usr/bin/ssh-keygen", ["-F", "[127.0.0.1]:\(h.server.port)", "-f", path])
        #expect(check.status == 0)
    }

    @Test func acceptAndSaveDoesNotWriteThroughASymbolicLink() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        defer { h.server.stop() }
        let elsewhere = dir.path + "/elsewhere"
        _ = dir.sub("home/.ssh")
        #expect(symlink(elsewhere, knownHostsPath(h)) == 0)
        let tty = try TmuxSession(command: [Paths.termhost, "exec", h.target, "--", "echo", "connected"], environment: h.environment,
                                  width: 250)
        defer { tty.close() }
        tty.waitFor("Choose 1-3:")
        tty.type("2")
        let done = tty.waitFor("[exit")
        #expect(done.contains("Failed to add the host to the list of known hosts (\(h.home)/.ssh/known_hosts): cannot add the host key to \(h.home)/.ssh/known_hosts: it is a symbolic link, which termhost does not write through"), "\(done)")
        #expect(done.contains("connected") && done.contains("[exit 0]"), "accepted for this connection")
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
    }
}
