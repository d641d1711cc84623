import Foundation
import Testing
import TestSupport

/// A termhost killed with SIGKILL runs no pause: the partial file it leaves is still listed by
/// `sftp paused` (the checkpoint written before the partial's first byte), `--resume` completes
/// it and `cancel` removes it.
@Suite struct KilledTransferEndToEndTests {
    static let size = 6 * 1024 * 1024

    /// Starts a transfer paced to 16 Mbit/s, waits until its partial file has grown past
    /// 500 kB, and kills termhost with SIGKILL.
    static func killMidway(_ h: SSHHarness, _ verb: String, _ args: [String], partial: String) throws {
        let run = try h.sftpInBackground(verb, ResumeEndToEndTests.limit + args)
        #expect(Files.waitForSize(partial, atLeast: 500_000), "\(verb) never wrote 500 kB to \(partial)")
        kill(run.process.processIdentifier, SIGKILL)
        run.process.waitUntilExit()
        #expect(run.process.terminationReason == .uncaughtSignal && run.process.terminationStatus == SIGKILL)
        #expect(Files.size(partial) < Self.size, "the transfer finished before it was killed")
    }

    /// `sftp VERB --resume ARGS` completes the killed transfer to the source's bytes, and
    /// nothing is left paused or partial.
    static func resume(_ h: SSHHarness, _ verb: String, _ args: [String], source: String, target: String) throws {
        let resumed = try h.sftp(verb, ["--resume"] + args)
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }

    @Test func anUploadKilledWithSIGKILLIsListedAndResumedToTheSameSHA256() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: Self.size)
        try Self.killMidway(h, "put", [source, h.remote(target)], partial: Files.partial(of: target))
        #expect(!Files.exists(target) && Files.exists(Files.partial(of: target)))

        let paused = try h.termhost(["sftp", "paused"])
        #expect(paused.stdout == "upload \(source) -> \(NSUserName())@127.0.0.1:\(h.server.port):\(target): 0 of \(Self.size) bytes\n",
                "\(paused.output)")
        try Self.resume(h, "put", [source, h.remote(target)], source: source, target: target)
    }

    @Test func aDownloadKilledWithSIGKILLIsListedAndResumedToTheSameSHA256() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)
        try Self.killMidway(h, "get", [h.remote(source), target], partial: Files.partial(of: target))
        #expect(!Files.exists(target) && Files.exists(Files.partial(of: target)))

        let paused = try h.termhost(["sftp", "paused"])
        #expect(paused.stdout == "download \(NSUserName())@127.0.0.1:\(h.server.port):\(source) -> \(target): 0 of \(Self.size) bytes\n",
                "\(paused.output)")
        try Self.resume(h, "get", [h.remote(source), target], source: source, target: target)
    }

    @Test func aKilledUploadIsCancelledWithItsRemotePartial() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: Self.size)
        try Self.killMidway(h, "put", [source, h.remote(target)], partial: Files.partial(of: target))

        let cancelled = try h.termhost(["sftp", "cancel", source])
        #expect(cancelled.status == 0, "\(cancelled.output)")
        #expect(!Files.exists(Files.partial(of: target)) && !Files.exists(target))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
    }
}
