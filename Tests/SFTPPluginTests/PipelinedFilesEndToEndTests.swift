import Foundation
import Testing
import TestSupport

/// Many small files move many at once on one SFTP channel (PipelinedUploads), here over a
/// 50 ms path where one file at a time would cost five round trips each: every file arrives
/// with its mode and time, nothing is left behind, a file the server refuses fails alone, a
/// lost connection pauses what was in flight and --resume finishes it, and a server that
/// allows one channel per connection still takes every file, one at a time. No timing is
/// asserted: how fast it went is Benchmarks/wan.sh's business.
@Suite(.timeLimit(.minutes(3))) struct PipelinedFilesEndToEndTests {
    /// `count` files of 1 to 70,000 bytes (some past one write request, one empty) with
    /// their own modes and times, in `dir`/many and a subdirectory of it.
    static func smallFiles(_ dir: TemporaryDirectory, count: Int) -> String {
        let root = dir.sub("local/many")
        for i in 0..<count {
            let path = i % 3 == 0 ? dir.sub("local/many/sub") + "/s\(i)" : root + "/f\(i)"
            Files.random(path, bytes: i == 0 ? 0 : (i * 7_919) % 70_000 + 1, mode: i % 2 == 0 ? 0o640 : 0o604)
            var times = [timespec(tv_sec: 1_600_000_000 + i, tv_nsec: 0), timespec(tv_sec: 1_600_000_000 + i, tv_nsec: 0)]
            utimensat(AT_FDCWD, path, &times, 0)
        }
        return root
    }

    /// The most files started and not yet done at once, from --json progress.
    static func inFlight(_ json: String) -> Int {
        var running = 0, peak = 0
        for line in json.split(separator: "\n") {
            if line.contains("\"event\":\"file-start\"") { running += 1; peak = max(peak, running) }
            if line.contains("\"event\":\"file-done\"") || line.contains("\"event\":\"file-failed\"") { running -= 1 }
        }
        return peak
    }

    /// The most files a pipeline had in flight at once, from its debug line (0: none ran).
    static func pipelined(_ stderr: String) -> Int {
        stderr.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: " small files in a pipeline on one channel, up to ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }.max() ?? 0
    }

    /// Relative path -> (SHA-256, mode, mtime) of every file under root.
    static func listing(_ root: String) -> [String: String] {
        var out: [String: String] = [:]
        for (rel, value) in Files.tree(root) where value != "dir" {
            var st = stat()
            stat(root + "/" + rel, &st)
            out[rel] = "\(value) \(String(st.st_mode & 0o777, radix: 8)) \(st.st_mtim.tv_sec)"
        }
        return out
    }

    /// Both ways, with maxPerHost 1: the pipeline holds the one slot and still has many files
    /// in flight at once (file-start events before the first file-done).
    @Test func manySmallFilesArriveWithTheirModesAndTimesOverOneChannel() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir)
        defer { path.stop() }
        path.policy(#""maxPerHost": 1"#)
        let source = Self.smallFiles(dir, count: 300), remote = dir.sub("remote"), back = dir.sub("back")
        let put = try path.put(["-r", "--json", source, path.h.remote(remote)])
        #expect(put.status == 0, "\(put.output.suffix(3000))")
        #expect(Self.inFlight(put.stdout) > 1, "\(put.stdout.prefix(3000))")
        #expect(Self.listing(remote + "/many") == Self.listing(source))
        #expect(!Files.tree(remote).keys.contains { $0.hasSuffix(".termhost-partial") })

        let get = try path.h.termhost(["--log-level", "debug", "sftp", "get", "-r", "--json", path.h.remote(remote + "/many"), back, "-P", String(path.proxy.port)],
                                      timeout: 120)
        #expect(get.status == 0, "\(get.output.suffix(3000))")
        #expect(Self.inFlight(get.stdout) > 1, "\(get.stdout.prefix(3000))")
        #expect(Self.listing(back + "/many") == Self.listing(source))
        #expect(!Files.tree(back).keys.contains { $0.hasSuffix(".termhost-partial") })
        #expect(try path.h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    /// A file whose partial name the server cannot create (a directory stands there) fails
    /// with the server's reason; the others arrive. One replaced with --overwrite goes by
    /// posix-rename; one whose target is a directory cannot be renamed into place and is kept
    /// as a partial with a checkpoint of the whole file, listed by `sftp paused`.
    @Test func aRefusedFileFailsAloneAndAnUnrenamableOneIsKept() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir)
        defer { path.stop() }
        let source = Self.smallFiles(dir, count: 40), remote = dir.sub("remote/many")
        // f4 cannot be created (its partial's name is a directory); f5 exists and is replaced;
        // f7's target is a directory, which a file cannot be renamed onto.
        try FileManager.default.createDirectory(atPath: Files.partial(of: remote + "/f4") + "/x", withIntermediateDirectories: true)
        Files.random(remote + "/f5", bytes: 10)
        try FileManager.default.createDirectory(atPath: remote + "/f7/inside", withIntermediateDirectories: true)
        let put = try path.put(["-r", "--overwrite", source, path.h.remote(dir.sub("remote"))])
        #expect(put.status == 1, "\(put.output.suffix(3000))")
        #expect(Self.pipelined(put.stderr) > 1, "\(put.stderr.suffix(3000))")
        let host = "\(NSUserName())@127.0.0.1:\(path.proxy.port)"
        #expect(put.stderr.contains("sftp: cannot create \(host):\(Files.partial(of: remote + "/f4")): Failure\n"), "\(put.stderr.suffix(3000))")
        #expect(put.stderr.contains("sftp: cannot rename \(host):\(Files.partial(of: remote + "/f7")) to \(remote)/f7: Failure (kept the upload as \(host):\(Files.partial(of: remote + "/f7")))\n"),
                "\(put.stderr.suffix(3000))")
        #expect(Files.sha256(remote + "/f5") == Files.sha256(source + "/f5"))
        var expected = Self.listing(source)
        expected["f4"] = nil
        expected["f7"] = nil
        var arrived = Self.listing(remote)
        arrived = arrived.filter { !$0.key.hasPrefix("f7/") && !$0.key.hasSuffix(".termhost-partial") }
        #expect(arrived == expected)
        #expect(Files.sha256(Files.partial(of: remote + "/f7")) == Files.sha256(source + "/f7"))
        let paused = try path.h.termhost(["sftp", "paused"])
        #expect(paused.stdout.contains(remote + "/f7"), "\(paused.output)")
        #expect(!paused.stdout.contains(remote + "/f4"), "\(paused.output)")
    }

    /// A file that grew past what its reads cover after the plan listed it goes again on its
    /// own (Download), and arrives as it is now.
    @Test func aFileThatGrewAfterThePlanIsReadOnItsOwn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir, delayMilliseconds: 5)
        defer { path.stop() }
        // One pipeline (one worker), so that the last file is opened only after most others ended.
        path.policy(#""maxPerHost": 1"#)
        let remote = dir.sub("remote/many"), back = dir.sub("back")
        for i in 0..<200 { Files.random(remote + String(format: "/f%03d", i), bytes: 20_000) }
        // 4 Mbit/s: seconds before the last file is opened.
        let run = try Background(Paths.termhost, ["--log-level", "debug", "sftp", "get", "-r", "-l", "4000", path.h.remote(remote), back,
                                                  "-P", String(path.proxy.port)], environment: path.h.environment)
        #expect(Wait.until(timeout: 60) { ((try? FileManager.default.contentsOfDirectory(atPath: back + "/many")) ?? []).count >= 5 }, "nothing arrived")
        Files.random(remote + "/f199", bytes: 3 << 20)
        let get = run.finish()
        #expect(get.status == 0, "\(get.stderr.suffix(3000))")
        #expect(get.stderr.contains("\(remote)/f199: the answers do not make the file fstat describes (\(3 << 20), planned 20000); reading it on its own"),
                "\(get.stderr.suffix(3000))")
        #expect(Files.tree(back + "/many") == Files.tree(remote))
    }

    /// --resume never writes over a partial file no checkpoint vouches for, either way: that
    /// file is refused with what to do, the others arrive.
    @Test func aResumeMeetingAPartialWithoutACheckpointRefusesThatFileOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir, delayMilliseconds: 5)
        defer { path.stop() }
        let source = Self.smallFiles(dir, count: 20), remote = dir.sub("remote/many"), back = dir.sub("back/many")
        Files.random(Files.partial(of: remote + "/f2"), bytes: 100)
        let foreign = Files.sha256(Files.partial(of: remote + "/f2"))
        let put = try path.put(["-r", "--resume", source, path.h.remote(dir.sub("remote"))])
        #expect(put.status == 1, "\(put.output.suffix(3000))")
        #expect(put.stderr.contains(":\(Files.partial(of: remote + "/f2")): no checkpoint records what this partial file holds"), "\(put.stderr.suffix(3000))")
        #expect(Files.sha256(Files.partial(of: remote + "/f2")) == foreign)
        #expect(Self.listing(remote).filter { !$0.key.hasPrefix(".") }.count == 19)

        Files.random(Files.partial(of: back + "/f4"), bytes: 100)
        let local = Files.sha256(Files.partial(of: back + "/f4"))
        let get = try path.h.termhost(["--log-level", "debug", "sftp", "get", "-r", "--resume", path.h.remote(remote), dir.sub("back"),
                                       "-P", String(path.proxy.port)], timeout: 120)
        #expect(get.status == 1, "\(get.output.suffix(3000))")
        #expect(get.stderr.contains("\(Files.partial(of: back + "/f4")): no checkpoint records what this partial file holds"), "\(get.stderr.suffix(3000))")
        #expect(Files.sha256(Files.partial(of: back + "/f4")) == local)
        #expect(Self.listing(back).filter { !$0.key.hasPrefix(".") }.count == 18, "f2 never arrived and f4 was refused")
    }

    /// sshd killed while files are in flight: each pauses (its start record kept), and
    /// --resume finishes every file byte-exact.
    @Test func aCutConnectionPausesTheFilesInFlightAndResumeFinishesThem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir)
        defer { path.stop() }
        let source = Self.smallFiles(dir, count: 600), remote = dir.sub("remote")
        // 2 Mbit/s: some seconds for the 20 MB, time enough to cut it short.
        let run = try path.putInBackground(["-r", "-l", "2000", source, path.h.remote(remote)])
        #expect(Wait.until(timeout: 60) { ((try? FileManager.default.contentsOfDirectory(atPath: remote + "/many")) ?? []).count >= 50 },
                "nothing arrived")
        path.h.server.crash()
        let cut = run.finish()
        #expect(cut.status == 1, "\(cut.stderr.suffix(3000))")
        try path.h.server.restart()
        let host = "\(NSUserName())@127.0.0.1:\(path.proxy.port)"
        #expect(cut.stderr.contains("sftp: \(host): the SFTP channel closed") || cut.stderr.contains(" \(host): connection lost: ")
                || cut.stderr.contains("connection to \(host) lost"), "\(cut.stderr.suffix(3000))")
        let resumed = try path.put(["-r", "--resume", source, path.h.remote(remote)])
        #expect(resumed.status == 0, "\(resumed.output.suffix(3000))")
        #expect(Self.pipelined(resumed.stderr) > 1, "\(resumed.stderr.suffix(3000))")
        #expect(Self.listing(remote + "/many") == Self.listing(source))
        #expect(try path.h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    /// `MaxSessions 1`: no channel besides libssh2's, so the files go one at a time, and all
    /// of them arrive.
    @Test func aServerWithOneChannelPerConnectionStillTakesEveryFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try UploadChannelsEndToEndTests.LongPath(dir, serverConfig: "MaxSessions 1", delayMilliseconds: 1)
        defer { path.stop() }
        let source = Self.smallFiles(dir, count: 30), remote = dir.sub("remote")
        let put = try path.put(["-r", source, path.h.remote(remote)])
        #expect(put.status == 0, "\(put.output.suffix(3000))")
        #expect(put.stderr.contains(": small files go one at a time: sftp: \(NSUserName())@127.0.0.1:\(path.proxy.port): the server refused another SFTP channel ("),
                "\(put.stderr.suffix(3000))")
        #expect(Self.listing(remote + "/many") == Self.listing(source))
    }
}
