import Foundation
import Testing
import TestSupport

/// A test that writes to a program that has already exited fails on its own; the test process
/// goes on (before: SIGPIPE ended the runner and every test in flight with it). The programs
/// the tests start still get SIGPIPE's default action.
@Suite struct PipeSignalTests {
    @Test func writingToAProgramThatHasExitedFailsTheWriteNotTheTestProcess() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        let input = Pipe()
        process.standardInput = input
        try process.run()
        process.waitUntilExit()
        try? input.fileHandleForReading.close()   // no reader left anywhere
        let chunk = Data(repeating: 0x61, count: 1 << 16)
        var failed = false
        for _ in 0..<4 where !failed {
            do { try input.fileHandleForWriting.write(contentsOf: chunk) } catch { failed = true }
        }
        #expect(failed, "the write to a pipe without a reader reported EPIPE")
    }

    @Test func programsTheTestsStartKeepSIGPIPEsDefault() throws {
        // SigIgn and SigCgt are hexadecimal masks; SIGPIPE (13) is bit 12.
        let status = try Shell.run("/bin/grep", ["-E", "^Sig(Ign|Cgt):", "/proc/self/status"]).stdout
        for line in status.split(separator: "\n") {
            let mask = UInt64(line.split(separator: "\t").last ?? "", radix: 16) ?? 0
            #expect(mask & (1 << 12) == 0, "\(line)")
        }
    }
}
