import Foundation
import Testing
import TestSupport

/// What a real server's names and a user's numbers can do to termhost: a link in the target is
/// not followed, control characters in names are shown and never reach the terminal, numbers
/// out of range are refused with their range, and the pacing of a long limited transfer does
/// not overflow.
@Suite struct SafetyEndToEndTests {
    /// A link already in the target where the download will put a directory
    /// (target/tree/dir -> elsewhere): not followed; the rest of the tree arrives.
    @Test func aLinkInTheTargetIsNotFollowed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote/tree")
        Files.random(remote + "/top.txt", bytes: 10)
        Files.random(dir.sub("remote/tree/dir") + "/inner.txt", bytes: 10)
        let target = dir.sub("target"), elsewhere = dir.sub("elsewhere")
        try FileManager.default.createDirectory(atPath: target + "/tree", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: target + "/tree/dir", withDestinationPath: elsewhere)
        let r = try h.sftp("get", ["-r", h.remote(remote), target])
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("sftp: \(target)/tree/dir is a symbolic link; not followed, nothing under \(NSUserName())@127.0.0.1:\(h.server.port):\(remote)/dir was downloaded\n"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty, "\(r.output)")
        #expect(Files.sha256(target + "/tree/top.txt") == Files.sha256(remote + "/top.txt"))
    }

    /// A paused recursive download whose directory was moved elsewhere, partial file and all,
    /// with a link left in its place: --resume refuses the link instead of finishing the file
    /// (and writing it) elsewhere.
    @Test func aResumeDoesNotFollowALinkPlantedWhilePaused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote/tree")
        Files.random(dir.sub("remote/tree/sub") + "/big.bin", bytes: ResumeEndToEndTests.size)
        let target = dir.sub("target"), partial = Files.partial(of: target + "/tree/sub/big.bin")
        let cut = try ResumeEndToEndTests.cutShort(h, "get", ["-r", h.remote(remote), target], partial: partial)
        #expect(cut.stdout.contains("1 paused (run again with --resume)"), "\(cut.stdout)\n\(cut.stderr)")
        // The directory goes elsewhere, with the partial file in it, and a link takes its place.
        let elsewhere = dir.path + "/elsewhere"
        #expect(rename(target + "/tree/sub", elsewhere) == 0)
        try FileManager.default.createSymbolicLink(atPath: target + "/tree/sub", withDestinationPath: elsewhere)
        let resumed = try h.sftp("get", ["-r", "--resume", h.remote(remote), target])
        #expect(resumed.status == 1, "\(resumed.output)")
        #expect(resumed.stderr.contains("sftp: \(target)/tree/sub is a symbolic link; not followed, nothing under \(NSUserName())@127.0.0.1:\(h.server.port):\(remote)/sub was downloaded\n"), "\(resumed.stderr)")
        #expect(!Files.exists(elsewhere + "/big.bin"), "\(resumed.output)")
    }

    /// Names with a newline and an escape sequence, as a real file system holds them: `ls`,
    /// `ls -l`, the shell's listing and an error message show them as octal escapes, so a
    /// newline cannot fake a line and an escape sequence is never sent to the terminal.
    @Test func controlCharactersInRemoteNamesAreShownNotObeyed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote")
        Files.random(remote + "/bad\nfake.txt", bytes: 1)
        Files.random(remote + "/esc\u{1B}[2Jclear", bytes: 2)
        Files.random(remote + "/plain", bytes: 3)
        let ls = try h.sftp("ls", [h.remote(remote)])
        #expect(ls.status == 0, "\(ls.output)")
        #expect(ls.stdout == "bad\\012fake.txt\nesc\\033[2Jclear\nplain\n", "\(ls.stdout)")
        let long = try h.sftp("ls", ["-l", h.remote(remote)])
        let lines = long.stdout.split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasSuffix(" bad\\012fake.txt") && lines[1].hasSuffix(" esc\\033[2Jclear"), "\(long.stdout)")
        #expect(!long.stdout.contains("\u{1B}"))

        let shell = try h.termhost(["sftp", "-P", String(h.server.port), "\(NSUserName())@127.0.0.1"],
                                   stdin: "cd \(remote)\nls\nls -l\nget missing\u{1B}[2J\n")
        #expect(shell.stdout.contains("\nbad\\012fake.txt\nesc\\033[2Jclear\nplain\n"), "\(shell.stdout)")
        #expect(!shell.output.contains("\u{1B}"), "\(shell.output)")
        #expect(shell.stderr.contains("sftp: \(NSUserName())@127.0.0.1:\(h.server.port):\(remote)/missing\\033[2J: No such file or directory\n"), "\(shell.stderr)")

        // JSON escapes them as JSON does, so a script gets the real name back.
        let json = try h.sftp("ls", ["--json", h.remote(remote)])
        #expect(json.stdout.contains(#""name":"esc\u001b[2Jclear""#) && json.stdout.contains(#""name":"bad\nfake.txt""#), "\(json.stdout)")
    }

    /// Numbers from the command line and the settings are range-checked where they enter, and
    /// the message names the option and its range. `-l 18014398509481985` used to trap (SIGILL).
    @Test func numbersOutOfRangeAreRefusedWithTheirRange() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir, policy: #"{ "settings": { "org.termhost.sftp": { "maxActive": "lots" } } }"#)
        defer { h.server.stop() }
        let remote = dir.sub("remote")
        Files.random(remote + "/f", bytes: 10)
        for (args, message) in [
            (["-l", "18014398509481985"], "termhost sftp: -l must be a whole number of kbit/s from 1 to 104857600, not '18014398509481985'\n"),
            (["-l", "0"], "termhost sftp: -l must be a whole number of kbit/s from 1 to 104857600, not '0'\n"),
            (["-l", "fast"], "termhost sftp: -l must be a whole number of kbit/s from 1 to 104857600, not 'fast'\n"),
        ] {
            let r = try h.sftp("get", args + [h.remote(remote + "/f"), dir.sub("back")])
            #expect(r.status == 2 && !r.signaled && r.stderr == message, "\(args): \(r.status) \(r.stderr)")
        }
        let port = try h.termhost(["sftp", "ls", h.remote(remote), "-P", "70000"])
        #expect(port.status == 2 && port.stderr.hasPrefix("termhost sftp: -P must be a whole number from 1 to 65535, not '70000'\n"), "\(port.stderr)")
        let shell = try h.termhost(["sftp", "-P", "99999999999999999999", "\(NSUserName())@127.0.0.1"])
        #expect(shell.status == 2 && shell.stderr == "termhost sftp: -P must be a whole number from 1 to 65535, not '99999999999999999999'\n", "\(shell.stderr)")
        // A setting that is no number at all is named with its range (and its JSON text), and the
        // default used.
        let get = try h.sftp("get", ["-l", "104857600", h.remote(remote + "/f"), dir.sub("back")])
        #expect(get.status == 0, "\(get.output)")
        #expect(get.stderr.contains("termhost sftp: setting maxActive must be a whole number from 1 to 100, not '\"lots\"'; using 15\n"), "\(get.stderr)")
    }

    /// The bandwidth limit's arithmetic (Pacing.swift, compiled here as it is) past 17 GiB: bytes
    /// times 10^9 nanoseconds passes 2^64 there, which used to trap in the middle of a limited
    /// transfer. Now exact while the result fits, and saturated after.
    @Test func thePacingArithmeticDoesNotOverflowPastSeventeenGiB() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let main = dir.write("main.swift", """
        let gib: UInt64 = 1 << 30
        print(Pacing.due(start: 5, sent: 20 * gib, bytesPerSecond: 1_024_000))
        print(Pacing.due(start: 5, sent: .max, bytesPerSecond: 1))
        print(Pacing.due(start: .max - 1, sent: 17 * gib, bytesPerSecond: 1_000_000_000))
        print(Pacing.wait(due: 10, now: 20), Pacing.saturatingAdd(.max, 1), Pacing.saturatingMultiply(1 << 40, 1 << 40))
        """)
        let exe = dir.path + "/pacing"
        let build = try Shell.run("/usr/bin/env", ["swiftc", "-swift-version", "6", "-o", exe, main,
                                                   Paths.root + "/Plugins/SFTP/Sources/SFTPPlugin/Pacing.swift"], timeout: 120)
        #expect(build.status == 0, "\(build.output)")
        let r = try Shell.run(exe, [])
        #expect(!r.signaled && r.stdout == "20971520000005\n\(UInt64.max)\n\(UInt64.max)\n0 \(UInt64.max) \(UInt64.max)\n", "\(r.output)")
    }
}
