import Foundation
import Testing
import TestSupport

/// The files service (org.termhost.sftp.files/1) used from a plain C plugin, as the assistant's
/// file tools will use it.
@Suite struct FilesServiceTests {
    static func buildClient(_ h: SSHHarness, _ dir: TemporaryDirectory) throws {
        try Fixtures.serviceClient(source: "sftp-client-plugin.c", id: "org.test.sftpclient", command: "sfc",
                                   requires: "org.termhost.sftp.files/1", in: h.plugins)
    }

    @Test func browsingCallsAnswerWithJSONBytesAndStatusCodes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        try Self.buildClient(h, dir)
        let remote = dir.sub("remote")
        _ = dir.write("remote/file.txt", "0123456789")
        let r = try h.termhost(["sfc", "browse", h.target, remote])
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "mkdir: 0", "\(r.output)")
        #expect(lines.contains("rename: 0"))
        let listing = try #require(lines.firstIndex(of: "list: 0").map { lines[$0 - 1] }, "\(r.stdout)")
        let entries = try #require(JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["file.txt", "renamed"])
        #expect(entries.map { $0["type"] as? String } == ["file", "directory"])
        #expect(entries[0]["size"] as? Int == 10)
        #expect(r.stdout.contains("\"name\":\"renamed\",\"type\":\"directory\""))
        #expect(r.stdout.contains("23456\nread: 0\n"), "bytes 2..6 of the file")
        #expect(r.stdout.contains("rmdir: 0\nrm: 0\nrm again: 2 sftp: cannot remove \(h.target):\(remote)/file.txt: No such file or directory\n"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("stale: 2 no such SFTP session: it was closed, or the handle is not one open() returned\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote).isEmpty)
    }

    @Test func transfersReportProgressAndACancelRemovesThePartialFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        try Self.buildClient(h, dir)
        let remote = dir.sub("remote") + "/big.bin", local = dir.sub("local")
        Files.random(remote, bytes: 3_000_000)
        let ok = try h.termhost(["sfc", "get", h.target, remote, local + "/big.bin"])
        #expect(ok.status == 0, "\(ok.output)")
        #expect(ok.stdout.contains("\"done\":1,") && ok.stdout.contains("\"bytes\":3000000,"), "\(ok.stdout)")
        #expect(ok.stdout.contains("transfer: 0 \nprogress: called, last 3000000 of 3000000\nstop after: 2\n"), "\(ok.stdout)")
        #expect(Files.sha256(local + "/big.bin") == Files.sha256(remote))

        let cancelled = try h.termhost(["sfc", "cancel", h.target, remote, local + "/again.bin"])
        #expect(cancelled.stdout.contains("stop: 0\n"), "\(cancelled.output)")
        #expect(cancelled.stdout.contains("\"cancelled\":1,"), "\(cancelled.stdout)")
        #expect(cancelled.stdout.contains("transfer: 7 sftp: transfer stopped: 0 done, 0 paused, 1 cancelled\n"), "\(cancelled.stdout)")
        #expect(!Files.exists(local + "/again.bin") && !Files.exists(Files.partial(of: local + "/again.bin")))
    }
}
