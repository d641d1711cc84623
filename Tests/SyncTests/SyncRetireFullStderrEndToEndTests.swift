import Foundation
import Glibc
import Testing
import TestSupport

/// A retired session says why on its stderr; a stderr nobody reads (a full pipe, a stopped
/// pager) must not hold the session's end, the others' ends, or the process's exit.
extension SyncRetireEndToEndTests {
    @Test func aSessionWhoseStderrIsAFullPipeStillEndsWhenRetired() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        // Filled before termhost starts, non-blocking only meanwhile: termhost shares this open file.
        let flags = fcntl(ends[1], F_GETFL)
        _ = fcntl(ends[1], F_SETFL, flags | O_NONBLOCK)
        let page = [UInt8](repeating: UInt8(ascii: "."), count: 4096)
        while write(ends[1], page, page.count) > 0 {}
        while write(ends[1], page, 1) > 0 {}
        _ = fcntl(ends[1], F_SETFL, flags)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.termhost)
        process.arguments = ["exec", "web", "--", "sleep", "120"]
        process.environment = h.environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            h.server.stop()
            second.stop()
        }
        #expect(Wait.until { h.server.log.contains("Accepted publickey") }, "\(h.server.log)")
        try moveWebOnB()
        let ended = Wait.until(timeout: 120) { !process.isRunning }
        #expect(ended, "termhost still runs, its stderr full")
        guard ended else { return }
        process.waitUntilExit()
        #expect(process.terminationStatus == 255)
    }
}
