import Foundation
import Testing
import TestSupport

/// `termhost sftp get|put` and pause/resume against a stock Dropbear, whose 24,576-byte channel
/// window fills after one SFTP write request (libssh2 1.10 then returns 0 from a write).
@Suite(.enabled(if: DropbearServer.available, "needs root (a mount namespace) and dropbear-bin"))
struct DropbearEndToEndTests {
    static let megabyte = 1024 * 1024

    static func harness(_ dir: TemporaryDirectory) throws -> DropbearHarness {
        let h = try DropbearHarness(dir: dir)
        try Fixtures.sftpPlugin(in: h.plugins)
        return h
    }

    /// termhost sftp VERB ARGS... -P PORT
    static func sftp(_ h: DropbearHarness, _ verb: String, _ args: [String]) throws -> Shell.Result {
        try h.termhost(["sftp", verb] + args + ["-P", String(h.server.port)])
    }

    static func remote(_ path: String) -> String { "\(NSUserName())@127.0.0.1:\(path)" }

    @Test func aMegabytePutArrivesByteExactWithNothingLeftBehind() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/data.bin", remote = dir.sub("remote")
        Files.random(source, bytes: Self.megabyte, mode: 0o640)
        let put = try Self.sftp(h, "put", [source, Self.remote(remote + "/")])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(put.stdout.hasPrefix("uploaded 1 of 1 file, 1.0 MB in "), "\(put.stdout)")
        #expect(!put.stderr.contains("lost: \n"), "an empty reason is never shown: \(put.stderr)")
        #expect(Files.sha256(remote + "/data.bin") == Files.sha256(source))
        #expect(Files.mode(remote + "/data.bin") == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote) == ["data.bin"])
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    /// Requests of 258,048 bytes (what the sftp-server behind Dropbear allows, with Termhost's
    /// libssh2) through a window that takes a tenth of one: each goes out over many window
    /// adjusts, and the upload arrives whole.
    @Test func requestsLargerThanTheWindowArriveByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/data.bin", target = dir.sub("remote") + "/data.bin"
        Files.random(source, bytes: 6 * Self.megabyte + 17)
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", source, Self.remote(target), "-P", String(h.server.port)])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(put.stderr.contains(try WriteRequestsEndToEndTests.expectedLine(target)), "\(put.stderr)")
        #expect(Files.sha256(target) == Files.sha256(source))
    }

    /// A file of several segments goes over several SFTP channels of the one connection (each
    /// with Dropbear's small window), and arrives whole.
    @Test(.enabled(if: SFTPLibSSH2.patched, "several channels need Termhost's libssh2"))
    func aLargeUploadOverSeveralChannelsArrivesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        Files.random(source, bytes: 48 * Self.megabyte + 5)
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", source, Self.remote(target), "-P", String(h.server.port)], timeout: 120)
        #expect(put.status == 0, "\(put.output.suffix(3000))\n\(h.server.log)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
        #expect(UploadChannelsEndToEndTests.furtherChannels(put.stderr) >= 1, "\(put.stderr.suffix(3000))")
    }

    /// Small files pipelined on one channel (PipelinedUploads, PipelinedDownloads) through
    /// Dropbear's window, both ways.
    @Test func manySmallFilesArriveWithTheirModesAndTimes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let source = PipelinedFilesEndToEndTests.smallFiles(dir, count: 120), remote = dir.sub("remote")
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", "-r", source, Self.remote(remote), "-P", String(h.server.port)])
        #expect(put.status == 0, "\(put.output.suffix(3000))\n\(h.server.log)")
        #expect(PipelinedFilesEndToEndTests.pipelined(put.stderr) > 1, "\(put.stderr.suffix(3000))")
        #expect(PipelinedFilesEndToEndTests.listing(remote + "/many") == PipelinedFilesEndToEndTests.listing(source))
        let back = dir.sub("back")
        let get = try h.termhost(["--log-level", "debug", "sftp", "get", "-r", Self.remote(remote + "/many"), back, "-P", String(h.server.port)])
        #expect(get.status == 0, "\(get.output.suffix(3000))\n\(h.server.log)")
        #expect(PipelinedFilesEndToEndTests.pipelined(get.stderr) > 1, "\(get.stderr.suffix(3000))")
        #expect(PipelinedFilesEndToEndTests.listing(back + "/many") == PipelinedFilesEndToEndTests.listing(source))
    }

    @Test func aMegabyteGetArrivesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/data.bin", local = dir.sub("local")
        Files.random(source, bytes: Self.megabyte + 17)
        let get = try Self.sftp(h, "get", [Self.remote(source), local + "/back.bin"])
        #expect(get.status == 0, "\(get.output)\n\(h.server.log)")
        #expect(Files.sha256(local + "/back.bin") == Files.sha256(source))
        #expect(try FileManager.default.contentsOfDirectory(atPath: local) == ["back.bin"])
    }

    @Test func aPutCutShortByTheServerIsListedAndResumesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let size = 6 * Self.megabyte
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        let partial = Files.partial(of: target)
        Files.random(source, bytes: size)
        // 16 Mbit/s: about three seconds for the file, time enough to cut it short.
        let run = try Background(Paths.termhost, ["sftp", "put", "-l", "16000", source, Self.remote(target), "-P", String(h.server.port)],
                                 environment: h.environment)
        // Half the file on the server before the cut: the acknowledgements of the last request or
        // two may be lost with the connection (the client had not read them), not all of them.
        #expect(Files.waitForSize(partial, atLeast: 3_000_000), "put never wrote 3 MB to \(partial)")
        h.server.crash()
        let cut = run.finish()
        #expect(cut.status == 1, "\(cut.stdout)\n\(cut.stderr)")
        #expect(cut.stdout.contains("1 paused (run again with --resume)"), "\(cut.stdout)\n\(cut.stderr)")
        #expect(!Files.exists(target) && Files.exists(partial))

        let paused = try h.termhost(["--json", "sftp", "paused"])
        let offset = try #require((JSONSerialization.jsonObject(with: Data(paused.stdout.utf8)) as? [[String: Any]])?.first?["offset"] as? Int,
                                  "\(paused.output)")
        #expect(offset > 0 && offset < size, "the checkpoint holds what the server acknowledged: \(offset)")

        try h.server.restart()
        let resumed = try Self.sftp(h, "put", ["--resume", "--json", source, Self.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output)\n\(h.server.log)")
        #expect(resumed.stdout.contains("\"offset\":\(offset)"), "it went on from the acknowledged bytes: \(resumed.stdout)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(partial))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    /// A server that stops taking data (its connection process stopped) fails the upload within
    /// connectTimeout with a reason, never an empty one, and the file is listed for resume.
    @Test func aServerThatStopsTakingDataPausesTheUploadWithAReason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "connectTimeout": 2 } } }"#)
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: 4 * Self.megabyte)
        let run = try Background(Paths.termhost, ["sftp", "put", "-l", "16000", source, Self.remote(target), "-P", String(h.server.port)],
                                 environment: h.environment)
        #expect(Files.waitForSize(Files.partial(of: target), atLeast: 500_000), "put never wrote to the partial file")
        let connections = ["-P", String(h.server.pid)]
        try Shell.run("/usr/bin/pkill", ["-STOP"] + connections)
        defer { _ = try? Shell.run("/usr/bin/pkill", ["-CONT"] + connections) }
        let stalled = run.finish()
        #expect(stalled.status == 1, "\(stalled.stdout)\n\(stalled.stderr)")
        #expect(stalled.stdout.contains("1 paused (run again with --resume)"), "\(stalled.stdout)\n\(stalled.stderr)")
        let host = "\(NSUserName())@127.0.0.1:\(h.server.port)"
        let reason = try #require(stalled.stderr.components(separatedBy: "connection to \(host) lost: ").dropFirst().first, "\(stalled.stderr)")
        #expect(!reason.hasPrefix("\n") && !reason.isEmpty, "a reason is given: \(stalled.stderr)")
        #expect(try h.termhost(["sftp", "paused"]).stdout.hasPrefix("upload \(source) -> \(host):\(target): "))
    }

    /// A failure after the last byte (here the rename, refused because the target appeared
    /// meanwhile) keeps the remote partial listed, and --resume commits it once the way is free.
    @Test func anUploadWhoseCommitIsRefusedIsListedAndResumes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let size = 4 * Self.megabyte
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        let partial = Files.partial(of: target)
        Files.random(source, bytes: size)
        let run = try Background(Paths.termhost, ["sftp", "put", "-l", "16000", source, Self.remote(target), "-P", String(h.server.port)],
                                 environment: h.environment)
        #expect(Files.waitForSize(partial, atLeast: 500_000), "put never wrote to \(partial)")
        _ = dir.write("remote/big.bin", "in the way\n")
        let refused = run.finish()
        #expect(refused.status == 1, "\(refused.stdout)\n\(refused.stderr)")
        let host = "\(NSUserName())@127.0.0.1:\(h.server.port)"
        #expect(refused.stderr.contains("(kept the upload as \(host):\(partial))"), "\(refused.stderr)")
        let paused = try h.termhost(["sftp", "paused"])
        #expect(paused.stdout == "upload \(source) -> \(host):\(target): \(size) of \(size) bytes\n", "\(paused.output)")

        try FileManager.default.removeItem(atPath: target)
        let resumed = try Self.sftp(h, "put", ["--resume", source, Self.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(partial))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }
}
