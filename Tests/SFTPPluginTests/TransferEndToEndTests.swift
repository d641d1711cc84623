import Foundation
import Testing
import TestSupport

/// `termhost sftp get|put|ls` against a real OpenSSH sshd on loopback.
@Suite struct TransferEndToEndTests {
    @Test func binaryFilesRoundTripWithTheSameSHA256AndPermissions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let local = dir.sub("local"), remote = dir.sub("remote")
        Files.random(local + "/data.bin", bytes: 5 * 1024 * 1024 + 17, mode: 0o640)
        let put = try h.sftp("put", [local + "/data.bin", h.remote(remote + "/")])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(put.stdout.hasPrefix("uploaded 1 of 1 file, 5.2 MB in "), "\(put.stdout)")
        #expect(Files.sha256(remote + "/data.bin") == Files.sha256(local + "/data.bin"))
        #expect(Files.mode(remote + "/data.bin") == 0o640)
        let get = try h.sftp("get", [h.remote(remote + "/data.bin"), local + "/back.bin"])
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.sha256(local + "/back.bin") == Files.sha256(local + "/data.bin"))
        #expect(Files.mode(local + "/back.bin") == 0o640)
        // Nothing partial is left behind on either side.
        #expect(try FileManager.default.contentsOfDirectory(atPath: local).sorted() == ["back.bin", "data.bin"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote) == ["data.bin"])
    }

    /// A legal 255-byte name (multi-byte characters near the cut) goes both ways: the partial
    /// file beside it gets a name that fits NAME_MAX, and nothing partial is left.
    @Test func aFileWithA255ByteNameRoundTrips() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let local = dir.sub("local"), remote = dir.sub("remote")
        let name = String(repeating: "é", count: 100) + String(repeating: "n", count: 55)   // 200 + 55 bytes
        #expect(name.utf8.count == 255)
        Files.random(local + "/" + name, bytes: 70_000, mode: 0o644)
        let put = try h.sftp("put", [local + "/" + name, h.remote(remote + "/")])
        #expect(put.status == 0, "\(put.output)")
        #expect(Files.sha256(remote + "/" + name) == Files.sha256(local + "/" + name))
        try FileManager.default.removeItem(atPath: local + "/" + name)
        let get = try h.sftp("get", [h.remote(remote + "/" + name), local + "/"])
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.sha256(local + "/" + name) == Files.sha256(remote + "/" + name))
        #expect(try FileManager.default.contentsOfDirectory(atPath: local) == [name])
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote) == [name])
    }

    @Test func directoryTreesWithEmptyDirectoriesAndAwkwardNamesRoundTrip() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let src = dir.sub("src/tree")
        for sub in ["with space", "new\nline", "ünïcødé ✓", "empty/deeper", "a/b/c"] {
            try FileManager.default.createDirectory(atPath: src + "/" + sub, withIntermediateDirectories: true)
        }
        Files.random(src + "/with space/file one.bin", bytes: 70_000)
        Files.random(src + "/new\nline/line\nbreak", bytes: 1)
        Files.random(src + "/ünïcødé ✓/naïve ✓.txt", bytes: 4096)
        Files.random(src + "/a/b/c/zero", bytes: 0)
        Files.random(src + "/top", bytes: 123_457)
        let remote = dir.sub("remote")
        let put = try h.sftp("put", ["-r", src, h.remote(remote)])
        #expect(put.status == 0, "\(put.output)")
        #expect(Files.tree(remote + "/tree") == Files.tree(src))
        // Back down, a name with a control character is the server's word like any other: it
        // is refused and named (HostileServerTests has the rest), and everything else arrives.
        let back = dir.sub("back")
        let get = try h.sftp("get", ["-r", h.remote(remote + "/tree"), back])
        #expect(get.status == 1, "\(get.output)")
        #expect(get.stderr.contains("sftp: \(NSUserName())@127.0.0.1:\(h.server.port):\(remote)/tree: refused the name 'new\\012line' the server listed: it contains control characters; nothing was written for it\n"), "\(get.stderr)")
        #expect(Files.tree(back + "/tree") == Files.tree(src).filter { !$0.key.hasPrefix("new\nline") })
        #expect(Files.tree(back + "/tree")["empty/deeper"] == "dir")

        let long = try h.sftp("ls", ["-l", h.remote(remote + "/tree")])
        #expect(long.status == 0, "\(long.output)")
        #expect(long.stdout.split(separator: "\n").first?.hasPrefix("drwx") == true && long.stdout.contains(" 123457 "), "\(long.stdout)")
        let ls = try h.sftp("ls", ["--json", h.remote(remote + "/tree")])
        let names = try (JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["a", "empty", "new\nline", "top", "with space", "ünïcødé ✓"], "\(ls.output)")
    }

    @Test func symbolicLinksAreSkippedNeverFollowedIntoLoops() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote/tree")
        Files.random(remote + "/real", bytes: 10)
        try FileManager.default.createSymbolicLink(atPath: remote + "/loop", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: remote + "/alias", withDestinationPath: "real")
        let get = try h.sftp("get", ["-r", h.remote(remote), dir.sub("back")])
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.tree(dir.path + "/back/tree") == ["real": Files.sha256(remote + "/real")])
        #expect(get.stderr.contains("skipped symbolic link 127.0.0.1") || get.stderr.contains("skipped symbolic link \(NSUserName())@127.0.0.1"), "\(get.stderr)")
        #expect(get.stderr.contains("/tree/loop"))

        // The same tree uploaded: the local links are skipped and named too.
        let local = dir.sub("local/tree")
        Files.random(local + "/real", bytes: 10)
        try FileManager.default.createSymbolicLink(atPath: local + "/loop", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: local + "/alias", withDestinationPath: "real")
        let put = try h.sftp("put", ["-r", local, h.remote(dir.sub("up"))])
        #expect(put.status == 0, "\(put.output)")
        #expect(Files.tree(dir.path + "/up/tree") == ["real": Files.sha256(local + "/real")])
        #expect(put.stderr.contains("skipped symbolic link \(local)/loop"), "\(put.stderr)")
        #expect(put.stderr.contains("skipped symbolic link \(local)/alias"), "\(put.stderr)")
    }

    @Test func missingPathsAndPermissionDeniedNameThePathAndTheServersReason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let missing = try h.sftp("get", [h.remote(dir.path + "/nope.bin"), dir.sub("out")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("\(dir.path)/nope.bin: No such file or directory"), "\(missing.stderr)")
        // A user the file system really refuses (root would be allowed everywhere); sshd reads
        // the shared authorized_keys as that user.
        chmod(dir.path, 0o755)
        chmod(h.server.directory, 0o755)
        let denied = try h.sftp("get", [h.remote("/etc/shadow", user: "termhost-test"), dir.sub("out")])
        #expect(denied.status == 1, "\(denied.output)")
        #expect(denied.stderr.contains("sftp: cannot open termhost-test@127.0.0.1:\(h.server.port):/etc/shadow: Permission denied\n"), "\(denied.stderr)")
        #expect(!Files.exists(dir.path + "/out/shadow") && !Files.exists(dir.path + "/out/.shadow.termhost-partial"))
        let ls = try h.sftp("ls", [h.remote(dir.path + "/nope")])
        #expect(ls.status == 1 && ls.stderr.contains("/nope: No such file or directory"))

        // Uploads the same: a directory the user may not write to, and a local file that is not there.
        let local = dir.sub("up") + "/data.bin"
        Files.random(local, bytes: 100)
        let refused = try h.sftp("put", [local, h.remote("/etc/data.bin", user: "termhost-test")])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr.contains("sftp: cannot create termhost-test@127.0.0.1:\(h.server.port):/etc/.data.bin.termhost-partial: Permission denied\n"),
                "\(refused.stderr)")
        #expect(!Files.exists("/etc/data.bin") && !Files.exists("/etc/.data.bin.termhost-partial"))
        let absent = try h.sftp("put", [dir.path + "/up/nope.bin", h.remote(dir.sub("remote") + "/")])
        #expect(absent.status == 1, "\(absent.output)")
        #expect(absent.stderr.contains("sftp: cannot upload \(dir.path)/up/nope.bin: No such file or directory"), "\(absent.stderr)")
    }

    @Test func conflictsFailByDefaultAndEachPolicyDoesWhatItSays() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote"), local = dir.sub("local")
        Files.random(remote + "/report.pdf", bytes: 3000)
        Files.random(local + "/report.pdf", bytes: 10)
        let original = Files.sha256(local + "/report.pdf")

        let refused = try h.sftp("get", [h.remote(remote + "/report.pdf"), local])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("1 target already exists: \(local)/report.pdf; choose --overwrite, --skip or --keep-both"), "\(refused.stderr)")
        #expect(Files.sha256(local + "/report.pdf") == original)

        let skip = try h.sftp("get", ["--skip", h.remote(remote + "/report.pdf"), local])
        #expect(skip.status == 0)
        #expect(skip.stdout.hasPrefix("downloaded 0 of 1 file, 0 B in ") && skip.stdout.contains(", 1 skipped"), "\(skip.stdout)")
        #expect(Files.sha256(local + "/report.pdf") == original)

        #expect(try h.sftp("get", ["--keep-both", h.remote(remote + "/report.pdf"), local]).status == 0)
        #expect(Files.sha256(local + "/report (1).pdf") == Files.sha256(remote + "/report.pdf"))
        #expect(Files.sha256(local + "/report.pdf") == original)

        #expect(try h.sftp("get", ["--overwrite", h.remote(remote + "/report.pdf"), local]).status == 0)
        #expect(Files.sha256(local + "/report.pdf") == Files.sha256(remote + "/report.pdf"))

        // Upload over an existing remote file: atomic through posix-rename@openssh.com.
        Files.random(local + "/new.bin", bytes: 5000)
        Files.random(remote + "/new.bin", bytes: 7)
        #expect(try h.sftp("put", [local + "/new.bin", h.remote(remote + "/new.bin")]).status == 1)
        let over = try h.sftp("put", ["--overwrite", local + "/new.bin", h.remote(remote + "/new.bin")])
        #expect(over.status == 0, "\(over.output)")
        #expect(Files.sha256(remote + "/new.bin") == Files.sha256(local + "/new.bin"))
        #expect(try h.sftp("put", ["--skip", "--overwrite", local + "/new.bin", h.remote(remote)]).status == 2)
    }

    @Test func keepBothNeverGivesTwoFilesOneName() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote/docs"), local = dir.sub("local/docs")
        Files.random(remote + "/a.txt", bytes: 100)
        Files.random(remote + "/a (1).txt", bytes: 200)
        Files.random(local + "/a.txt", bytes: 5)
        let get = try h.sftp("get", ["-r", "--keep-both", h.remote(remote), dir.path + "/local"])
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.sha256(local + "/a (1).txt") == Files.sha256(remote + "/a (1).txt"))
        #expect(Files.sha256(local + "/a (2).txt") == Files.sha256(remote + "/a.txt"), "the renamed copy skips the name the plan already uses")
        #expect(Files.size(local + "/a.txt") == 5)
    }

    @Test func resumeRefusesAPartialFromAnotherSource() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote"), target = dir.sub("local") + "/x.bin"
        Files.random(remote + "/one.bin", bytes: 6 << 20)
        try FileManager.default.copyItem(atPath: remote + "/one.bin", toPath: remote + "/two.bin")
        _ = try ResumeEndToEndTests.cutShort(h, "get", [h.remote(remote + "/one.bin"), target], partial: Files.partial(of: target),
                                             atLeast: 300_000)
        let other = try h.sftp("get", ["--resume", h.remote(remote + "/two.bin"), target])
        #expect(other.status == 1)
        #expect(other.stderr.contains("it holds a download of \(NSUserName())@127.0.0.1:\(h.server.port):\(remote)/one.bin, not of"), "\(other.stderr)")
    }

    /// One batch: as many files at once as maxPerHost allows, no more (the process-wide bound,
    /// maxActive, is FilesServiceTests' maxActiveBoundsTransfersFromSeveralHostsTogether).
    /// Files past 1 MiB, which each hold a slot; small ones share one in a pipeline
    /// (PipelinedFilesEndToEndTests).
    @Test func theQueueNeverRunsMoreFilesPerHostThanItsLimit() throws {
        for limit in [1, 3] {
            let dir = TemporaryDirectory()
            defer { dir.remove() }
            let h = try SSHHarness.withSFTP(dir, policy: #"{ "settings": { "org.termhost.sftp": { "maxPerHost": \#(limit) } } }"#)
            defer { h.server.stop() }
            let remote = dir.sub("remote/many")
            for i in 0..<8 { Files.random(remote + "/f\(i)", bytes: 1_100_000) }
            // 24 Mbit/s for the whole batch: each file takes long enough for overlaps to show.
            let get = try h.sftp("get", ["-r", "--json", "-l", "24000", h.remote(remote), dir.sub("back")])
            #expect(get.status == 0, "\(get.output)")
            var running = 0, peak = 0
            for line in get.stdout.split(separator: "\n") {
                if line.contains("\"event\":\"file-start\"") { running += 1; peak = max(peak, running) }
                if line.contains("\"event\":\"file-done\"") { running -= 1 }
            }
            #expect(peak == limit, "limit \(limit): observed \(peak) files at once\n\(get.stdout)")
            #expect(Files.tree(dir.path + "/back/many") == Files.tree(remote))
        }
    }

    /// A local write that fails (here the file-size limit: EFBIG) fails the download with the
    /// system's reason, commits nothing and leaves no partial file: the error of the writer
    /// thread (PartialFileWriter) is the transfer's.
    @Test func aLocalWriteFailureFailsTheDownloadAndKeepsNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: 8 << 20)
        // At most 2 MiB per file (ulimit -f counts KiB), and SIGXFSZ ignored (an ignored signal
        // stays ignored across exec), so the write fails with EFBIG instead of killing termhost.
        let script = "trap '' XFSZ; ulimit -f 2048; exec \"$0\" \"$@\""
        let r = try Shell.run("/bin/sh", ["-c", script, Paths.termhost, "sftp", "get", h.remote(source), target,
                                          "-P", String(h.server.port)], environment: h.environment)
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("sftp: cannot write \(target): File too large\n"), "\(r.stderr)")
        #expect(!Files.exists(target) && !Files.exists(Files.partial(of: target)), "\(r.output)")
    }

    @Test func aLimitOutsideItsBoundsIsClampedAndSaidSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir, policy: #"{ "settings": { "org.termhost.sftp": { "maxActive": 4, "maxPerHost": 80, "segments": 9, "channels": 0 } } }"#)
        defer { h.server.stop() }
        Files.random(dir.sub("remote") + "/f", bytes: 10)
        let get = try h.sftp("get", [h.remote(dir.path + "/remote/f"), dir.sub("back")])
        #expect(get.status == 0)
        #expect(get.stderr.contains("termhost sftp: setting maxPerHost must be a whole number from 1 to 4, not '80'; using 4 (at most min(50, maxActive))\n"), "\(get.stderr)")
        #expect(get.stderr.contains("termhost sftp: setting segments must be a whole number from 1 to 4, not '9'; using 4\n"), "\(get.stderr)")
        #expect(get.stderr.contains("termhost sftp: setting channels must be a whole number from 1 to 8, not '0'; using 1\n"), "\(get.stderr)")
    }

    /// `segments` 1: a file large enough for segments moves on the one connection it started on.
    @Test func oneSegmentKeepsALargeFileOnOneConnection() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir, policy: #"{ "settings": { "org.termhost.sftp": { "segments": 1 } } }"#)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/large.bin"
        Files.random(source, bytes: 80 << 20)
        let get = try h.sftp("get", [h.remote(source), dir.sub("back") + "/large.bin"])
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.sha256(dir.path + "/back/large.bin") == Files.sha256(source))
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 1, "\(h.server.log)")
    }

    /// A download reads ahead what its round trip needs (ReadAhead.swift): on loopback the
    /// smallest buffer, which keeps both copies of each byte in the CPU's cache. The debug log
    /// says what was measured and chosen.
    @Test func aLoopbackDownloadReadsAheadForItsRoundTripAndSaysSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let said = try debugDownload(h, dir, remote: { h.remote($0) }, options: ["-P", String(h.server.port)])
        // Loopback's round trip is well under a millisecond, unless a loaded machine held a
        // request back; whatever it was, the buffer follows the rule for it. (1.15 ms is the
        // last round trip that 360 KB covers; the log rounds to 0.01 ms.)
        #expect(said.followsTheRule, "\(said.line)")
        if said.milliseconds < 1.145 { #expect(said.kilobytes == 360 && said.megabytesAhead == 1.44, "\(said.line)") }
    }

    /// Behind a slow link the socket's own round trip can still be loopback's (a local tunnel):
    /// the round trip is timed end to end, so the download reads ahead the most.
    @Test func aDownloadBehindASlowLinkReadsAheadTheMost() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        let relay = SlowRelay(to: h.server.port, delay: 0.004)   // 8 ms or more a round trip
        defer { relay.stop(); h.server.stop() }
        let hostKey = h.server.knownHostsLine.split(separator: " ", maxSplits: 1)[1]
        _ = dir.write("home/.ssh/known_hosts", h.knownHosts + "[127.0.0.1]:\(relay.port) \(hostKey)\n")
        let said = try debugDownload(h, dir, remote: { h.remote($0) }, options: ["-P", String(relay.port)])
        #expect(said.milliseconds >= 8, "\(said.line)")
        #expect(said.kilobytes == 1800 && said.megabytesAhead == 7.2, "\(said.line)")
    }

    /// SFTP through a jump host: the file arrives whole, and the read-ahead follows the rule for
    /// the round trip measured through the hop (that it is the whole path's, the slow relay shows).
    @Test func aDownloadThroughAJumpHostArrivesWhole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        let jump = try SSHServer(in: dir, authorizedKeys: [h.key.publicLine])
        defer { h.server.stop(); jump.stop() }
        _ = dir.write("home/.ssh/known_hosts", h.knownHosts + jump.knownHostsLine + "\n")
        let me = NSUserName()
        let add = try h.termhost(["hosts", "add", "inner", "127.0.0.1", "--port", String(h.server.port), "--user", me,
                                  "--jump", "\(me)@127.0.0.1:\(jump.port)"])
        #expect(add.status == 0, "\(add.output)")
        let said = try debugDownload(h, dir, remote: { "inner:" + $0 })
        #expect(jump.log.contains("Accepted publickey for \(me)"), "\(jump.log)")
        #expect(said.followsTheRule, "\(said.line)")
    }

    /// `termhost --log-level debug sftp get` of a new 3 MiB file reached as `remote(path)`, with
    /// `options`: expects it whole, and returns the read-ahead line the download logged.
    private func debugDownload(_ h: SSHHarness, _ dir: TemporaryDirectory, remote: (String) -> String,
                               options: [String] = []) throws -> ReadAheadLine {
        let source = dir.sub("remote") + "/data.bin", target = dir.sub("back") + "/data.bin"
        Files.random(source, bytes: 3 << 20)
        let get = try h.termhost(["--log-level", "debug", "sftp", "get", remote(source), target] + options)
        #expect(get.status == 0, "\(get.output)")
        #expect(Files.sha256(target) == Files.sha256(source))
        return try #require(ReadAheadLine(get.stderr, path: source), "\(get.stderr)")
    }
}

/// The debug line a download logs about its read-ahead:
/// "sftp: HOST: PATH: round trip 0.12 ms; reading 360 KB at a time, 1.44 MB ahead".
struct ReadAheadLine {
    let line: String
    let milliseconds: Double
    let kilobytes: Int
    let megabytesAhead: Double

    init?(_ stderr: String, path: String) {
        guard let line = stderr.split(separator: "\n").map(String.init).first(where: { $0.contains(": \(path): round trip ") }),
              let tail = line.components(separatedBy: ": round trip ").last else { return nil }
        let words = tail.replacingOccurrences(of: ";", with: "").replacingOccurrences(of: ",", with: "").split(separator: " ")
        // "0.12 ms reading 360 KB at a time 1.44 MB ahead"
        guard words.count == 11, let ms = Double(words[0]), let kb = Int(words[3]), let ahead = Double(words[8]) else { return nil }
        self.line = line
        milliseconds = ms
        kilobytes = kb
        megabytesAhead = ahead
    }

    /// The documented rule (Docs/SFTP.md, Speed): what 10 Gbit/s carries in the round trip, in
    /// 30,000-byte requests, 4 buffers' worth, between 1.44 and 7.2 MB. The log rounds the round
    /// trip to 0.01 ms, so either side of that rounding passes.
    var followsTheRule: Bool {
        func buffer(_ ms: Double) -> Int {
            let requests = (1_250_000_000 * max(ms, 0) / 1000 / 4 / 30_000).rounded(.up)
            return Int(min(max(requests, 12), 60)) * 30
        }
        return (buffer(milliseconds - 0.005)...buffer(milliseconds + 0.005)).contains(kilobytes)
            && abs(megabytesAhead - Double(4 * kilobytes) / 1000) < 0.006
    }
}
