import Foundation
import Testing
import TestSupport

/// The SDK's Swift wrappers of the plugin-provided services (SSHTransport's channels,
/// SFTPFiles, MetricsSnapshots), called from a real Swift plugin (the services fixture's
/// client features) against the real plugins and a real sshd.
@Suite struct SDKServiceWrappersEndToEndTests {
    @Test func filesWrapperBrowsesTransfersAndReportsErrors() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        try Fixtures.swiftServices(in: h.plugins)
        let remote = dir.sub("remote")
        _ = dir.write("remote/file.txt", "0123456789")
        Files.random(remote + "/big.bin", bytes: 200_000)
        let r = try h.termhost(["swfiles", h.target, remote])
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        func value(_ name: String) -> String? {
            lines.first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
        }
        #expect(value("mkdir") == "ok" && value("rename") == "ok", "\(r.output)")
        let listing = try #require(value("list"), "\(r.output)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [[String: Any]], "\(listing)")
        #expect(entries.map { $0["name"] as? String } == ["big.bin", "file.txt", "renamed"])
        #expect(entries.map { $0["type"] as? String } == ["file", "file", "directory"])
        let statText = try #require(value("stat"), "\(r.output)")
        let stat = try #require(try JSONSerialization.jsonObject(with: Data(statText.utf8)) as? [String: Any], "\(statText)")
        #expect(stat["name"] as? String == "file.txt" && stat["size"] as? Int == 10, "\(stat)")
        #expect(value("read") == "23456", "bytes 2..6 of the file")
        #expect(value("rmdir") == "ok" && value("rm") == "ok", "\(r.output)")
        #expect(value("rm again") == "error 2 sftp: cannot remove \(h.target):\(remote)/file.txt: No such file or directory", "\(r.output)")
        #expect(value("stale") == "error 2 no such SFTP session: it was closed, or the handle is not one open() returned", "\(r.output)")

        #expect(value("get") == "ok", "\(r.output)")
        let summary = try #require(value("get summary"), "\(r.output)")
        #expect(summary.contains("\"done\":1,") && summary.contains("\"bytes\":200000,"), "\(summary)")
        #expect(value("progress") == "called, last 200000 of 200000", "\(r.output)")
        #expect(Files.sha256(remote + "/copy.bin") == Files.sha256(remote + "/big.bin"))
        // The default conflict policy refuses an existing target before anything moves.
        #expect(value("get again") == "error 4 sftp: 1 target already exists: \(remote)/copy.bin; choose --overwrite, --skip or --keep-both", "\(r.output)")
        #expect(value("get skip") == "ok", "\(r.output)")
        #expect(value("get skip summary")?.contains("\"done\":0,\"skipped\":1,") == true, "\(r.output)")
        #expect(value("stop") == "error 2 no running transfer with cookie 99", "\(r.output)")
    }

    @Test func channelAndExecWrappersReachTheServer() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try Fixtures.swiftServices(in: h.plugins)
        let r = try h.termhost(["swssh", h.target])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.hasPrefix("offers: bounded exec true, open_exec true, watch true, splice true\n"), "\(r.output)")
        let shell = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("shell: ") }, "\(r.output)")
        #expect(shell.split(separator: "|").contains { $0.trimmingCharacters(in: .whitespaces) == "30 100" }, "resized before stty ran: \(shell)")
        #expect(r.stdout.contains("\nexec: from-open-exec\n"), "\(r.output)")
        #expect(r.stdout.contains("\nexec status 3: from-stdin / to-stderr\n"), "\(r.output)")
        #expect(r.stdout.contains("\nbounded: error 8\n"), "TERMHOST_ERR_TIMEOUT: \(r.output)")
    }

    @Test func metricsWrapperListsHostsAndNamesAHostWithoutSampler() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: h.plugins)
        try Fixtures.swiftServices(in: h.plugins)
        let r = try h.termhost(["swmetrics", h.target, "live"])
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let before = Array(lines.prefix(2)), after = lines.filter { $0.hasPrefix("hosts: ") || $0.hasPrefix("snapshot: ") }.suffix(2)
        #expect(before.first == "hosts: []", "\(r.output)")
        #expect(before.last?.hasPrefix("snapshot: error 2 ") == true && before.last?.contains(h.target) == true, "\(r.output)")
        #expect(lines.contains("show: 0"), "\(r.output)")
        #expect(after.first == "hosts: [\"\(h.target)\"]", "\(r.output)")
        let snapshot = try #require(after.last.map { String($0.dropFirst("snapshot: ".count)) }, "\(r.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.utf8)) as? [String: Any], "\(r.output)")
        #expect(json["host"] as? String == h.target)
        #expect(json["state"] as? String == "live", "\(snapshot)")
    }
}
