import Foundation
import Testing
import TestSupport

/// The SFTP plugin's tools through `termhost tools call`, against a real OpenSSH sshd on
/// loopback (running as the test's user, so a remote path is a path in the test's directory).
@Suite struct SFTPToolsEndToEndTests {
    static func lab(_ dir: TemporaryDirectory) throws -> SSHHarness {
        let h = try SSHHarness.withSFTP(dir)
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath])
        #expect(add.status == 0, "\(add.output)")
        return h
    }

    static func call(_ h: SSHHarness, _ tool: String, _ values: [String: Any]) throws -> (Shell.Result, [String: Any]) {
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: values), as: UTF8.self)
        let r = try h.termhost(["tools", "call", tool, arguments])
        let object = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
        return (r, object)
    }

    @Test func sftpListIsBoundedAndSaysHowManyItLeftOut() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        for name in ["a", "b", "c\u{1b}[31m\nfake"] { _ = dir.write("files/\(name)", "x") }
        let (r, o) = try Self.call(h, "sftp_list", ["host": "lab", "path": dir.path + "/files", "max_entries": 2])
        #expect(r.status == 0, "\(r.output)")
        let entries = o["entries"] as? [[String: Any]] ?? []
        #expect(entries.compactMap { $0["name"] as? String } == ["a", "b"])
        #expect(entries.first?["type"] as? String == "file")
        #expect(o["omitted"] as? Int == 1)
        #expect(o["note"] as? String == "1 more entries not shown")
        let all = try Self.call(h, "sftp_list", ["host": "lab", "path": dir.path + "/files"])
        #expect(all.0.stdout.contains(#""c\u001b[31m\nfake""#), "the server's name arrives JSON-escaped: \(all.0.stdout)")
    }

    @Test func sftpReadGivesLineWindowsWithATruthfulNextOffset() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let file = dir.write("text.txt", "zero\none\ntwo ✓\nthree\nfour")
        let (r, o) = try Self.call(h, "sftp_read", ["host": "lab", "path": file, "offset": 1, "max_lines": 2])
        #expect(r.status == 0, "\(r.output)")
        #expect(o["lines"] as? [String] == ["one", "two ✓"])
        #expect(o["next_offset"] as? Int == 3)
        #expect(o["total_lines"] is NSNull)
        let (_, rest) = try Self.call(h, "sftp_read", ["host": "lab", "path": file, "offset": 3, "max_lines": 10])
        #expect(rest["lines"] as? [String] == ["three", "four"])
        #expect(rest["next_offset"] is NSNull)
        #expect(rest["total_lines"] as? Int == 5)
    }

    @Test(arguments: [("nul", [0x61, 0x62, 0x00, 0x0a], "it contains a NUL byte (byte 2)"),
                      ("latin1", [0x6f, 0x6b, 0x0a, 0xe9, 0x0a], "it is not UTF-8 (byte 3)")])
    func sftpReadRefusesBinaryFiles(_ name: String, _ bytes: [UInt8], _ reason: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let file = dir.path + "/" + name
        #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
        let (r, _) = try Self.call(h, "sftp_read", ["host": "lab", "path": file])
        #expect(r.status == 2, "\(r.output)")
        #expect(r.stderr.contains("looks binary: \(reason); sftp_read reads UTF-8 text only"), "\(r.stderr)")
    }

    @Test func sftpWriteThenReadRoundTripsAndReplacesOnlyWhenAsked() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let file = dir.path + "/out/new.conf"
        try FileManager.default.createDirectory(atPath: dir.path + "/out", withIntermediateDirectories: true)
        let (w, written) = try Self.call(h, "sftp_write", ["host": "lab", "path": file, "content": "a = 1\nb = ✓\n"])
        #expect(w.status == 0, "\(w.output)")
        #expect(written["bytes_written"] as? Int == 14)
        #expect(written["replaced"] as? Bool == false)
        let (_, read) = try Self.call(h, "sftp_read", ["host": "lab", "path": file])
        #expect(read["lines"] as? [String] == ["a = 1", "b = ✓"])
        let (again, _) = try Self.call(h, "sftp_write", ["host": "lab", "path": file, "content": "other\n"])
        #expect(again.status == 2, "\(again.output)")
        #expect(again.stderr.contains("exists; pass overwrite true to replace it"), "\(again.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "a = 1\nb = ✓\n")
        let (replace, replaced) = try Self.call(h, "sftp_write", ["host": "lab", "path": file, "content": "other\n", "overwrite": true])
        #expect(replace.status == 0, "\(replace.output)")
        #expect(replaced["replaced"] as? Bool == true)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "other\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/out") == ["new.conf"], "no temporary file is left")
    }

    @Test func sftpCopyCopiesARemoteFileToAnotherPath() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let content = String(repeating: "0123456789abcdef\n", count: 40_000)
        let source = dir.write("big.txt", content)
        let (r, o) = try Self.call(h, "sftp_copy", ["host": "lab", "path": source, "target_path": dir.path + "/copy.txt"])
        #expect(r.status == 0, "\(r.output)")
        #expect(o["bytes_copied"] as? Int == content.utf8.count)
        #expect(o["target_host"] as? String == "lab")
        #expect(try String(contentsOfFile: dir.path + "/copy.txt", encoding: .utf8) == content)
    }

    @Test func sftpCopyStreamsBetweenTwoSavedHosts() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        // A second saved host on the same server: two connections, the source's inside the target's.
        let add = try h.termhost(["hosts", "add", "lab2", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath])
        #expect(add.status == 0, "\(add.output)")
        let content = String(repeating: "cross-host ✓\n", count: 50_000)
        let source = dir.write("from.txt", content)
        _ = dir.write("to.txt", "old\n")
        let (refused, _) = try Self.call(h, "sftp_copy", ["host": "lab", "path": source, "target_host": "lab2", "target_path": dir.path + "/to.txt"])
        #expect(refused.status == 2 && refused.stderr.contains("exists; pass overwrite true"), "\(refused.output)")
        let (r, o) = try Self.call(h, "sftp_copy", ["host": "lab", "path": source, "target_host": "lab2",
                                                    "target_path": dir.path + "/to.txt", "overwrite": true])
        #expect(r.status == 0, "\(r.output)")
        #expect(o["target_host"] as? String == "lab2")
        #expect(o["replaced"] as? Bool == true)
        #expect(try String(contentsOfFile: dir.path + "/to.txt", encoding: .utf8) == content)
    }

    @Test func anAdHocDestinationIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let (r, _) = try Self.call(h, "sftp_list", ["host": "\(NSUserName())@127.0.0.1:\(h.server.port)", "path": "/"])
        #expect(r.status == 2, "\(r.output)")
        #expect(r.stderr.contains("is not a saved host"), "\(r.stderr)")
    }
}
