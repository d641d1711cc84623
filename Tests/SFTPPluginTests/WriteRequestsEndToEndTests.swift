import Foundation
import Testing
import TestSupport

/// An upload sends write requests as large as the server's limits@openssh.com allows when the
/// libssh2 it runs on carries Termhost's sftp-write-size patch: 258,048 bytes to OpenSSH's
/// sftp-server (its limit of 261,120 in whole pages) rather than libssh2's 30,000. Against a
/// real sshd here; DropbearEndToEndTests sends them through Dropbear's 24,576-byte window.
@Suite struct WriteRequestsEndToEndTests {
    /// The debug line an upload to OpenSSH's sftp-server logs about its requests, for the
    /// libssh2 the SFTP plugin loads: Termhost's patched build unless the tests were built on
    /// the system's libssh2 (TERMHOST_SYSTEM_LIBSSH2=1, as .ci/run's second pass is).
    static func expectedLine(_ path: String) throws -> String {
        let patched = try LoadedLibSSH2.exports("libssh2_sftp_termhost_write_size", of: Paths.products + "/libSFTPPlugin.so")
        let system = ProcessInfo.processInfo.environment["TERMHOST_SYSTEM_LIBSSH2"] == "1"
        #expect(patched || system, "the libssh2 the SFTP plugin loads lacks Scripts/libssh2-patches/sftp-write-size.patch")
        if patched {
            return ": \(path): writing 258048-byte requests (the server's limits: write 261120, packet 262144)\n"
        }
        return ": \(path): writing 30000-byte requests (this libssh2 cannot send larger ones)\n"
    }

    @Test func aLargeUploadWritesRequestsOfTheSizeTheServerAllows() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        // Not a whole number of requests: the last one is short.
        let source = dir.sub("local") + "/data.bin", target = dir.sub("remote") + "/data.bin"
        Files.random(source, bytes: 6 * 1024 * 1024 + 17)
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", source, h.remote(target), "-P", String(h.server.port)])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(put.stderr.contains(try Self.expectedLine(target)), "\(put.stderr)")
        #expect(Files.sha256(target) == Files.sha256(source))
    }

    /// A server that allows one session per connection (`MaxSessions 1`) refuses the second
    /// channel the limits are asked on: the upload goes on with libssh2's requests.
    @Test func aServerThatRefusesTheSecondChannelStillTakesTheUpload() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: "MaxSessions 1")
        try Fixtures.sftpPlugin(in: h.plugins)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/data.bin", target = dir.sub("remote") + "/data.bin"
        Files.random(source, bytes: 5 * 1024 * 1024)
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", source, h.remote(target), "-P", String(h.server.port)])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        if try LoadedLibSSH2.exports("libssh2_sftp_termhost_write_size", of: Paths.products + "/libSFTPPlugin.so") {
            #expect(put.stderr.contains(": \(target): writing 30000-byte requests (cannot ask the server's limits: "), "\(put.stderr)")
        }
        #expect(Files.sha256(target) == Files.sha256(source))
    }

    /// Below 4 MiB the limits are not asked (that costs a second channel and a round trip).
    @Test func aSmallUploadKeepsLibSSH2sRequestsAndAsksNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let source = dir.sub("local") + "/data.bin", target = dir.sub("remote") + "/data.bin"
        Files.random(source, bytes: 1024 * 1024)
        let put = try h.termhost(["--log-level", "debug", "sftp", "put", source, h.remote(target), "-P", String(h.server.port)])
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(!put.stderr.contains("-byte requests"), "\(put.stderr)")
        #expect(Files.sha256(target) == Files.sha256(source))
    }
}
