import Foundation
import Testing
import TestSupport

/// The SFTP plugin runs libssh2's SFTP layer on sessions the SSH plugin opened, so a termhost
/// process must map one libssh2 file: the 1.11 build Scripts/libssh2.sh made (which the plugins'
/// RUNPATH names) or the system's, never both.
@Suite struct OneLibSSH2EndToEndTests {
    @Test func aRunningSFTPSessionMapsExactlyOneLibSSH2() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let script = Pipe()
        let sftp = try Background(Paths.termhost, ["sftp", "-P", String(h.server.port), "\(NSUserName())@127.0.0.1"],
                                  environment: h.environment, stdin: script.fileHandleForReading)
        defer {
            try? script.fileHandleForWriting.close()
            sftp.process.waitUntilExit()
        }
        // A command answered means the session is up, lent by the SSH plugin to the SFTP plugin.
        script.fileHandleForWriting.write(Data("pwd\n".utf8))
        var output = ""
        while !output.contains("Remote working directory: /") {
            let chunk = sftp.stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }   // it ended
            output += String(decoding: chunk, as: UTF8.self)
        }
        #expect(output.contains("Remote working directory: /"), "\(output)")
        // procfs reports size 0: read it through cat, to the end.
        let maps = try Shell.run("/bin/cat", ["/proc/\(sftp.process.processIdentifier)/maps"]).stdout
        let files = Set(maps.split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first else { return nil }
            return path.contains("/libssh2.so") ? String(path) : nil
        })
        #expect(maps.contains("/libSSHPlugin.so") && maps.contains("/libSFTPPlugin.so"))
        #expect(files.count == 1, "libssh2 files mapped: \(files.sorted())")
    }
}
