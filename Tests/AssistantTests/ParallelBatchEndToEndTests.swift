import Foundation
import Glibc
import Testing
import TestSupport

/// A batch of parallel-safe calls really runs at the same time: the model asks for two
/// `sftp_read`s (SFTP plugin, each on its own connection to the real sshd) of two named pipes.
/// Each read blocks in the sftp server's open() until a writer comes, and the test sees both
/// servers waiting there at once (the kernel's wait channel) before it opens either pipe: a
/// batch run one call after another would never get there.
@Suite(.serialized) struct ParallelBatchEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    /// This sshd's sftp servers (internal-sftp, in a child of a child) blocked opening a named pipe.
    static func sftpServersWaitingOnAPipe(under server: pid_t) -> Int {
        func parent(_ pid: String) -> String? {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
            return stat.split(separator: ")").last?.split(separator: " ").dropFirst().first.map(String.init)
        }
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { Int($0) != nil }
        return pids.filter { pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            let wait = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? ""
            guard command.contains("sftp"), wait.contains("wait_for_partner") || wait.contains("fifo_open") else { return false }
            var ancestor = parent(pid)
            for _ in 0..<3 {
                if ancestor == String(server) { return true }
                ancestor = ancestor.flatMap(parent)
            }
            return false
        }.count
    }

    /// Lets the reader of a pipe go on: opens the write end (only possible while a reader
    /// waits), writes a line, closes it.
    static func release(_ path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        _ = write(fd, "line\n", 5)
        close(fd)
        return true
    }

    @Test func twoParallelSafeCallsOfOneTurnOverlap() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let pipes = [dir.path + "/pipe-1", dir.path + "/pipe-2"]
        for p in pipes { #expect(mkfifo(p, 0o600) == 0) }
        let read = { (id: String, host: String, path: String) in
            (id, "sftp_read", "{\"host\":\"\(host)\",\"path\":\"\(path)\"}")
        }
        let h = try Harness(dir: dir, script: [
            Chat.calls([read("call_1", "web1", pipes[0]), read("call_2", "web2", pipes[1])]),
            Chat.text(["read both"]),
        ])
        defer { h.stop() }
        _ = try Fixtures.bundle("libSFTPPlugin.so", as: "org.termhost.sftp", in: h.ssh.plugins)
        try h.termhost(["hosts", "add", "web2", "127.0.0.1", "--port", "\(h.ssh.server.port)", "--user", NSUserName()])
        let p = try h.start(["ask", "read both pipes"])
        let together = Wait.until(timeout: 120) { Self.sftpServersWaitingOnAPipe(under: h.ssh.server.pid) >= 2 }
        #expect(together, "the second sftp_read did not start while the first was running")
        for pipe in pipes { #expect(Wait.until(timeout: 120) { Self.release(pipe) }) }
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        // Both calls answered, in the model's order (sftp-server cannot seek a pipe, so each
        // answer is its read error; what counts here is that both opens were waiting at once).
        let second = try #require(h.model.requests.dropFirst().first).body
        let first = try #require(second.range(of: "\"tool_call_id\":\"call_1\""), "\(second)")
        let other = try #require(second.range(of: "\"tool_call_id\":\"call_2\""), "\(second)")
        #expect(first.lowerBound < other.lowerBound)
    }
}
