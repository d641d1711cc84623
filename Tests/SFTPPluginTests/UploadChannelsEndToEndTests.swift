import Foundation
import Testing
import TestSupport

/// Whether the SFTP plugin's libssh2 carries Termhost's write patch (what several channels need).
enum SFTPLibSSH2 {
    static let patched = (try? LoadedLibSSH2.exports("libssh2_sftp_termhost_write_size", of: Paths.products + "/libSFTPPlugin.so")) == true
}

/// One large upload spreads over several SFTP channels of its one connection (UploadLanes),
/// here over a 50 ms path (Benchmarks/delay-proxy.c) where one channel's window is what holds
/// an upload back: every byte arrives, a pause keeps what the first segments vouch for and
/// resumes byte-exact, a server that allows few channels still takes the whole file. No
/// timing is asserted: how fast it went is Benchmarks/wan.sh's business.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SFTPLibSSH2.patched, "several channels need Termhost's libssh2 (libssh2_sftp_termhost_write_size)"))
struct UploadChannelsEndToEndTests {
    static let size = 64 << 20

    /// A harness with an SFTP plugin whose server is reached through a delay proxy.
    struct LongPath {
        let h: SSHHarness
        let proxy: DelayProxy
        let dir: TemporaryDirectory

        init(_ dir: TemporaryDirectory, serverConfig: String = "", delayMilliseconds: Int = 50) throws {
            h = try SSHHarness(dir: dir, serverConfig: serverConfig)
            try Fixtures.sftpPlugin(in: h.plugins)
            proxy = try DelayProxy(in: dir, target: h.server.port, delayMilliseconds: delayMilliseconds)
            _ = dir.write("home/.ssh/known_hosts", "[127.0.0.1]:\(proxy.port) \(h.server.hostPublicKey)\n")
            // One connection whatever the machine's cores (segments' default is one per core
            // but one): what these tests count is channels.
            self.dir = dir
            policy("")
        }

        /// The SFTP plugin's settings: `"segments": 1` and `settings` (JSON members, or "").
        func policy(_ settings: String) {
            _ = dir.write("policy.json", #"{ "settings": { "org.termhost.sftp": { "segments": 1"# + (settings.isEmpty ? "" : ", " + settings) + " } } }")
        }

        func stop() {
            proxy.stop()
            h.server.stop()
        }

        func put(_ args: [String]) throws -> Shell.Result {
            try h.termhost(["--log-level", "debug", "sftp", "put"] + args + ["-P", String(proxy.port)], timeout: 120)
        }

        func putInBackground(_ args: [String]) throws -> Background {
            try Background(Paths.termhost, ["--log-level", "debug", "sftp", "put"] + args + ["-P", String(proxy.port)], environment: h.environment)
        }
    }

    /// The channels besides the first that wrote, as the debug log says.
    static func furtherChannels(_ stderr: String) -> Int {
        stderr.components(separatedBy: " of the upload writes from ").count - 1
    }

    @Test func aLargeUploadGoesOverSeveralChannelsOfOneConnectionAndArrivesWhole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try LongPath(dir)
        defer { path.stop() }
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        Files.random(source, bytes: Self.size + 17)
        let put = try path.put([source, path.h.remote(target)])
        #expect(put.status == 0, "\(put.output.suffix(3000))")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(Files.partial(of: target)))
        #expect(Self.furtherChannels(put.stderr) >= 1, "\(put.stderr.suffix(3000))")
        #expect(path.h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 1, "one connection")
    }

    /// An interrupt in the middle: the checkpoint vouches for the contiguous prefix only (later
    /// segments' bytes past a gap are sent again), and --resume finishes byte-exact, again over
    /// several channels.
    @Test func anInterruptedUploadOverSeveralChannelsResumesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try LongPath(dir)
        defer { path.stop() }
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        let partial = Files.partial(of: target)
        Files.random(source, bytes: Self.size)
        // 64 Mbit/s in all: some seconds for the file, time enough to cut it short.
        let run = try path.putInBackground(["-l", "64000", source, path.h.remote(target)])
        #expect(Wait.until(timeout: 60) { Files.writtenPrefix(partial) >= 2 << 20 }, "never wrote the first 2 MiB of \(partial)")
        // Cut once a further channel writes (a hole between the first segment's bytes and a
        // later one's), so the pause meets several.
        #expect(Wait.until(timeout: 60) { Files.size(partial) > Files.writtenPrefix(partial) + (1 << 20) }, "no further channel wrote")
        run.process.interrupt()
        let cut = run.finish()
        #expect(cut.status == 130, "\(cut.stderr.suffix(3000))")
        let paused = try path.h.termhost(["--json", "sftp", "paused"])
        let offset = try #require((JSONSerialization.jsonObject(with: Data(paused.stdout.utf8)) as? [[String: Any]])?.first?["offset"] as? Int,
                                  "\(paused.output)")
        #expect(offset > 0 && offset < Self.size, "\(offset)")
        #expect(Self.furtherChannels(cut.stderr) >= 1, "\(cut.stderr.suffix(3000))")

        let resumed = try path.put(["--resume", "--json", source, path.h.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output.suffix(3000))")
        #expect(resumed.stdout.contains("\"offset\":\(offset)"), "\(resumed.stdout.suffix(2000))")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(partial))
    }

    /// sshd killed mid-upload: nothing is sent on the dead session; the checkpoint holds what
    /// the server acknowledged and the resume against the restarted server is byte-exact.
    @Test func anUploadOverSeveralChannelsCutByTheServerResumesByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try LongPath(dir)
        defer { path.stop() }
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        let partial = Files.partial(of: target)
        Files.random(source, bytes: Self.size)
        let run = try path.putInBackground(["-l", "64000", source, path.h.remote(target)])
        #expect(Wait.until(timeout: 60) { Files.writtenPrefix(partial) >= 2 << 20 }, "never wrote the first 2 MiB of \(partial)")
        path.h.server.crash()
        let cut = run.finish()
        #expect(cut.status == 1, "\(cut.stderr.suffix(3000))")
        #expect(!Files.exists(target) && Files.exists(partial))

        try path.h.server.restart()
        let resumed = try path.put(["--resume", source, path.h.remote(target)])
        #expect(resumed.status == 0, "\(resumed.output.suffix(3000))")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(!Files.exists(partial))
    }

    /// A server error on some channels mid-upload (the remote file system fills: a 24 MiB
    /// tmpfs for 64 MiB) ends the upload with the server's reason, settles every channel
    /// without waiting for the session's timeout (240 s here, past the suite's time limit of
    /// 3 minutes: a request sent into another one's half-sent bytes is never answered), and
    /// removes the partial; the same command then uploads a file that fits.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a small tmpfs"))
    func aServerErrorOnSomeChannelsEndsTheUploadCleanly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let remote = dir.sub("remote")
        // Mounted before sshd starts, so its own mount namespace has it too.
        let mount = try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", remote])
        try #require(mount.status == 0, "\(mount.output)")
        defer { _ = try? Shell.run("/bin/umount", ["-l", remote]) }
        let path = try LongPath(dir, delayMilliseconds: 10)
        defer { path.stop() }
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.sftp": { "segments": 1 }, "org.termhost.ssh": { "connectTimeout": 240 } } }"#)
        let source = dir.sub("local") + "/large.bin", target = remote + "/large.bin"
        Files.random(source, bytes: Self.size)
        let put = try path.put([source, path.h.remote(target)])
        #expect(put.status == 1, "\(put.output.suffix(3000))")
        #expect(put.stderr.contains("sftp: cannot write \(NSUserName())@127.0.0.1:\(path.proxy.port):\(Files.partial(of: target)): "), "\(put.stderr.suffix(3000))")
        #expect(Self.furtherChannels(put.stderr) >= 1, "\(put.stderr.suffix(3000))")
        #expect(!Files.exists(Files.partial(of: target)) && !Files.exists(target))
        #expect(try path.h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")

        let small = dir.sub("local") + "/small.bin"
        Files.random(small, bytes: 4 << 20)
        let fits = try path.put([small, path.h.remote(remote + "/small.bin")])
        #expect(fits.status == 0, "\(fits.output.suffix(3000))")
        #expect(Files.sha256(remote + "/small.bin") == Files.sha256(small))
    }

    /// `MaxSessions 3`: SFTP's channel, the extensions channel and one more; the fourth is
    /// refused, and the upload goes on with the channels it has.
    @Test func aServerThatAllowsFewChannelsStillTakesTheWholeUpload() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try LongPath(dir, serverConfig: "MaxSessions 3", delayMilliseconds: 10)
        defer { path.stop() }
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        Files.random(source, bytes: Self.size)
        let put = try path.put([source, path.h.remote(target)])
        #expect(put.status == 0, "\(put.output.suffix(3000))")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(put.stderr.contains(": \(target): no further SFTP channel ("), "\(put.stderr.suffix(3000))")
        #expect(Self.furtherChannels(put.stderr) <= 1, "\(put.stderr.suffix(3000))")
    }

    /// `channels` 1: the upload stays on the channel it started on.
    @Test func channelsOneKeepsTheUploadOnOneChannel() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = try LongPath(dir, delayMilliseconds: 10)
        defer { path.stop() }
        path.policy(#""channels": 1"#)
        let source = dir.sub("local") + "/large.bin", target = dir.sub("remote") + "/large.bin"
        Files.random(source, bytes: 40 << 20)
        let put = try path.put([source, path.h.remote(target)])
        #expect(put.status == 0, "\(put.output.suffix(3000))")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(Self.furtherChannels(put.stderr) == 0, "\(put.stderr.suffix(3000))")
    }
}
