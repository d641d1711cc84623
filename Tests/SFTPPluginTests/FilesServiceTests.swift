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
        var lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(3)) == [
            "null caller open: 1 open: NULL caller, destination or out (caller is your plugin's termhost_host_t)",
            "null caller transfer: 1 transfer: NULL caller (caller is your plugin's termhost_host_t; cookies are kept per caller)",
            "null caller stop: 1 stop: NULL caller (caller is your plugin's termhost_host_t; cookies are kept per caller)",
        ], "\(r.output)")
        lines.removeFirst(min(3, lines.count))
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
        #expect(cancelled.stdout.contains("same cookie: 1 transfer: cookie 7 already names a running transfer of this plugin\nstop: 0\n"), "\(cancelled.output)")
        #expect(cancelled.stdout.contains("\"cancelled\":1,"), "\(cancelled.stdout)")
        #expect(cancelled.stdout.contains("transfer: 7 sftp: transfer stopped: 0 done, 0 paused, 1 cancelled\n"), "\(cancelled.stdout)")
        #expect(!Files.exists(local + "/again.bin") && !Files.exists(Files.partial(of: local + "/again.bin")))
    }

    /// maxActive bounds the whole process: two transfers from two hosts at once, each allowed
    /// 2 files by maxPerHost, move at most 2 files together when maxActive is 2, and more when
    /// it is not (so the count can tell).
    @Test func maxActiveBoundsTransfersFromSeveralHostsTogether() throws {
        for (maxActive, expectPeak) in [(2, 2...2), (15, 3...4)] {
            let dir = TemporaryDirectory()
            defer { dir.remove() }
            let h = try SSHHarness.withSFTP(dir, policy: #"{ "settings": { "org.termhost.sftp": { "maxActive": \#(maxActive), "maxPerHost": 2 } } }"#)
            defer { h.server.stop() }
            // "localhost" is another host name for the same server: another per-host count.
            _ = dir.write("home/.ssh/known_hosts", h.server.knownHostsLine + "\n[localhost]:\(h.server.port) \(h.server.hostPublicKey)\n")
            try Self.buildClient(h, dir)
            for name in ["a", "b"] { for i in 0..<4 { Files.random(dir.sub("remote/\(name)") + "/f\(i)", bytes: 2 << 20) } }
            let r = try h.termhost(["sfc", "pair",
                                    h.target, dir.path + "/remote/a", dir.sub("local-a"),
                                    "\(NSUserName())@localhost:\(h.server.port)", dir.path + "/remote/b", dir.sub("local-b")])
            #expect(r.status == 0, "\(r.output)")
            let peak = r.stdout.split(separator: "\n").first { $0.hasPrefix("peak: ") }.flatMap { Int($0.dropFirst(6)) } ?? -1
            #expect(expectPeak.contains(peak), "maxActive \(maxActive): \(peak) files at once\n\(r.output)")
            #expect(Files.tree(dir.path + "/local-b/b") == Files.tree(dir.path + "/remote/b"))
        }
    }
}
