import Foundation
import Testing
import TestSupport

/// Pause, resume and cancel: connection loss and interrupts keep partial files with a checkpoint;
/// --resume verifies the source and the partial prefix before it seeks; cancel removes them.
@Suite struct ResumeEndToEndTests {
    static let size = 6 * 1024 * 1024
    /// 16 Mbit/s: about three seconds for the file, time enough to cut it short.
    static let limit = ["-l", "16000"]

    /// Starts a bandwidth-limited transfer, waits until its partial file holds `bytes` and its
    /// first `prefix` bytes are written (a first segment with whole MiB for a checkpoint to
    /// vouch for), then stops it: with SIGINT (the transfer pauses) or by crashing sshd.
    /// Returns how it ended.
    static func cutShort(_ h: SSHHarness, _ verb: String, _ args: [String], partial: String, atLeast bytes: Int = 500_000,
                         prefix: Int = 0, crash: Bool = false, limit: [String] = limit) throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try h.sftpInBackground(verb, limit + args)
        #expect(Files.waitForSize(partial, atLeast: bytes), "\(verb) never wrote \(bytes) bytes to \(partial)")
        #expect(Wait.until { Files.writtenPrefix(partial) >= prefix }, "\(verb) never wrote the first \(prefix) bytes of \(partial)")
        if crash { h.server.crash() } else { run.process.interrupt() }
        return run.finish()
    }

    /// The offset of the one paused transfer, as `sftp paused --json` reports it.
    static func pausedOffset(_ h: SSHHarness) throws -> Int {
        let paused = try h.termhost(["--json", "sftp", "paused"])
        return try #require((JSONSerialization.jsonObject(with: Data(paused.stdout.utf8)) as? [[String: Any]])?.first?["offset"] as? Int,
                            "\(paused.output)")
    }

    @Test func sshdKilledMidDownloadThenResumedGivesTheSameSHA256() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)
        let cut = try Self.cutShort(h, "get", [h.remote(source), target], partial: Files.partial(of: target), atLeast: 1_000_000, crash: true)
        #expect(cut.status == 1, "\(cut.stderr)")
        #expect(cut.stdout.contains("1 paused (run again with --resume)"), "\(cut.stdout)\n\(cut.stderr)")
        #expect(!Files.exists(target))
        let kept = Files.size(Files.partial(of: target))
        #expect(kept >= 1_000_000 && kept < Self.size)
        let paused = try h.termhost(["sftp", "paused"])
        #expect(paused.stdout == "download \(NSUserName())@127.0.0.1:\(h.server.port):\(source) -> \(target): \(kept) of \(Self.size) bytes\n", "\(paused.stdout)")

        try h.server.restart()
        let resumed = try h.sftp("get", ["--resume", "--json", h.remote(source), target])
        #expect(resumed.status == 0, "\(resumed.output)")
        // It went on from the kept bytes instead of starting again.
        #expect(resumed.stdout.contains("\"offset\":\(kept)"), "\(resumed.stdout)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    /// Two segments whatever the machine's cores (the default is one per core but one).
    static let twoSegments = #"{ "settings": { "org.termhost.sftp": { "segments": 2 } } }"#

    /// A large single file is read as two segments on two connections; an interrupt keeps only
    /// the contiguous prefix in the checkpoint, and resume completes it byte for byte.
    @Test func aLargeDownloadInSegmentsPausesAndResumesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir, policy: Self.twoSegments)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/large.bin", target = dir.sub("local") + "/large.bin"
        Files.random(source, bytes: 80 << 20)
        let whole = try h.sftp("get", ["--json", h.remote(source), dir.path + "/local/whole.bin"])
        #expect(whole.status == 0, "\(whole.output)")
        #expect(Files.sha256(dir.path + "/local/whole.bin") == Files.sha256(source))
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 2, "one connection per segment")

        // 64 Mbit/s: about ten seconds for the file, cut short once the second segment writes
        // past the middle.
        let cut = try Self.cutShort(h, "get", [h.remote(source), target], partial: Files.partial(of: target), atLeast: 48 << 20,
                                    prefix: 2 << 20, limit: ["-l", "64000"])
        #expect(cut.status == 130, "\(cut.stderr)")
        let offset = try Self.pausedOffset(h)
        #expect(offset > 0 && offset < 40 << 20, "the checkpoint vouches for the first segment's prefix only: \(offset)")
        let resumed = try h.sftp("get", ["--resume", "--json", h.remote(source), target])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(resumed.stdout.contains("\"offset\":\(offset)"), "\(resumed.stdout)")
        #expect(Files.sha256(target) == Files.sha256(source))
    }

    /// The same for an upload: two connections write their halves of the remote partial.
    @Test func aLargeUploadInSegmentsPausesAndResumesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir, policy: Self.twoSegments)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/large.bin", remoteDir = dir.sub("remote")
        Files.random(source, bytes: 80 << 20)
        let whole = try h.sftp("put", [source, h.remote(remoteDir + "/whole.bin")])
        #expect(whole.status == 0, "\(whole.output)")
        #expect(Files.sha256(remoteDir + "/whole.bin") == Files.sha256(source))
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 2, "one connection per segment")

        let target = remoteDir + "/large.bin"
        let cut = try Self.cutShort(h, "put", [source, h.remote(target)], partial: Files.partial(of: target), atLeast: 48 << 20,
                                    prefix: 2 << 20, limit: ["-l", "64000"])
        #expect(cut.status == 130, "\(cut.stderr)")
        let offset = try Self.pausedOffset(h)
        #expect(offset > 0 && offset < 40 << 20, "the checkpoint vouches for the first segment's prefix only: \(offset)")
        let resumed = try h.sftp("put", ["--resume", "--json", source, h.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(resumed.stdout.contains("\"offset\":\(offset)"), "\(resumed.stdout)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
    }

    @Test func sshdKilledMidUploadThenResumedGivesTheSameSHA256() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: Self.size)
        let cut = try Self.cutShort(h, "put", [source, h.remote(target)], partial: Files.partial(of: target), atLeast: 1_000_000, crash: true)
        #expect(cut.status == 1, "\(cut.stderr)")
        #expect(!Files.exists(target) && Files.exists(Files.partial(of: target)))
        let offset = try Self.pausedOffset(h)
        #expect(offset > 0 && offset < Self.size, "the checkpoint holds what the server acknowledged: \(offset)")

        try h.server.restart()
        let resumed = try h.sftp("put", ["--resume", "--json", source, h.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output)")
        // It went on from the acknowledged bytes instead of starting again.
        #expect(resumed.stdout.contains("\"offset\":\(offset)"), "\(resumed.stdout)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
    }

    @Test func aRemoteFileChangedWhilePausedIsRefusedWithTheReason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)
        // SIGINT: the host shuts down, the transfer pauses.
        let cut = try Self.cutShort(h, "get", [h.remote(source), target], partial: Files.partial(of: target))
        #expect(cut.status == 130, "\(cut.stderr)")
        let kept = Files.size(Files.partial(of: target))
        #expect(kept > 0)

        let handle = try #require(FileHandle(forWritingAtPath: source))
        handle.seekToEndOfFile()
        handle.write(Data("more".utf8))
        handle.closeFile()
        let refused = try h.sftp("get", ["--resume", h.remote(source), target])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot resume \(NSUserName())@127.0.0.1:\(h.server.port):\(source): it changed since the transfer paused (size \(Self.size) -> \(Self.size + 4)"), "\(refused.stderr)")
        #expect(Files.size(Files.partial(of: target)) == kept, "a refused resume keeps the partial file")
    }

    @Test func aTamperedPartialFileIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)
        _ = try Self.cutShort(h, "get", [h.remote(source), target], partial: Files.partial(of: target))
        let handle = try #require(FileHandle(forWritingAtPath: Files.partial(of: target)))
        handle.write(Data("XXXX".utf8))
        handle.closeFile()
        let refused = try h.sftp("get", ["--resume", h.remote(source), target])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("are not the ones downloaded (SHA-256 differs"), "\(refused.stderr)")
    }

    @Test func aTamperedRemotePartialOfAnUploadIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: Self.size)
        let partial = Files.partial(of: target)
        _ = try Self.cutShort(h, "put", [source, h.remote(target)], partial: partial)
        let offset = try Self.pausedOffset(h)
        #expect(offset > 4, "nothing acknowledged")
        // Same length, other bytes: only reading the partial back can tell.
        let handle = try #require(FileHandle(forWritingAtPath: partial))
        handle.write(Data("XXXX".utf8))
        handle.closeFile()
        let refused = try h.sftp("put", ["--resume", source, h.remote(target)])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot resume into \(NSUserName())@127.0.0.1:\(h.server.port):\(partial): its first \(offset) bytes are not the ones uploaded (SHA-256 differs)"), "\(refused.stderr)")
        #expect(Files.exists(partial), "a refused resume keeps the partial file")
    }

    @Test func cancelRemovesPartialFilesAndNamesOneItCannotRemove() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remoteDir = dir.sub("remote"), localDir = dir.sub("local")
        Files.random(remoteDir + "/down.bin", bytes: Self.size)
        Files.random(localDir + "/up.bin", bytes: Self.size)

        for (verb, args, partial) in [("get", [h.remote(remoteDir + "/down.bin"), localDir + "/down.bin"], Files.partial(of: localDir + "/down.bin")),
                                      ("put", [localDir + "/up.bin", h.remote(remoteDir + "/up.bin")], Files.partial(of: remoteDir + "/up.bin"))] {
            let cut = try Self.cutShort(h, verb, args, partial: partial, atLeast: 300_000)
            #expect(cut.status == 130, "\(verb): \(cut.stdout)\(cut.stderr)")
            #expect(Files.exists(partial))
        }
        let pausedBefore = try h.termhost(["sftp", "paused"])
        let cancelDown = try h.termhost(["sftp", "cancel", localDir + "/down.bin"])
        #expect(cancelDown.status == 0, "\(cancelDown.output)")
        #expect(!Files.exists(Files.partial(of: localDir + "/down.bin")))
        // An upload is named by its local file too.
        let cancelUp = try h.termhost(["sftp", "cancel", localDir + "/up.bin"])
        #expect(cancelUp.status == 0, "\(cancelUp.output)\n\(pausedBefore.output)")
        #expect(!Files.exists(Files.partial(of: remoteDir + "/up.bin")))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")

        // A partial that cannot be removed (here a directory took its name) is named, and the
        // transfer stays paused.
        let partial = Files.partial(of: localDir + "/down.bin")
        _ = try Self.cutShort(h, "get", [h.remote(remoteDir + "/down.bin"), localDir + "/down.bin"], partial: partial, atLeast: 300_000)
        try FileManager.default.removeItem(atPath: partial)
        try FileManager.default.createDirectory(atPath: partial + "/in-the-way", withIntermediateDirectories: true)
        let stuck = try h.termhost(["sftp", "cancel", localDir + "/down.bin"])
        #expect(stuck.status == 1)
        #expect(stuck.stderr.contains("cannot remove the partial file \(partial): "), "\(stuck.stderr)")
        #expect(try h.termhost(["sftp", "paused"]).stdout.contains(localDir + "/down.bin"))
    }
}
