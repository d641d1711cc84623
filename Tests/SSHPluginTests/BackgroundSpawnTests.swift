import Foundation
import Testing
import TestSupport

/// The harness's background children (tmux servers, agents) hold no descriptor of the test
/// process beyond their own /dev/null streams. A tmux server that inherited another test's pipe
/// once kept that pipe's reader from seeing EOF, and the test waiting on it hung.
@Suite struct BackgroundSpawnTests {
    @Test func aBackgroundChildHoldsOnlyItsOwnStreams() throws {
        // Open in this process while the child starts, and inheritable whatever Foundation
        // does with its pipes' flags, so only closing descriptors in the child keeps it out.
        let pipe = Pipe()
        for fd in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, 0)
        }
        let pid = Shell.spawnBackground("/bin/sleep", ["30"])
        #expect(pid > 0)
        defer { Shell.stopBackground(pid) }
        // Wait until the child runs sleep with only its streams. Right after exec the dynamic
        // loader briefly holds the libraries it maps (fd 3 on a loaded machine, seen once in
        // CI), so one look can catch that; an inherited descriptor never goes away, so waiting
        // for the set to shrink still fails on a leak.
        func descriptors() -> [Int32] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap(Int32.init).sorted()
        }
        let settled = Wait.until(timeout: 10) {
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "sleep\n" && descriptors() == [0, 1, 2]
        }
        let fds = descriptors()
        #expect(settled, "the child also holds \(fds.filter { $0 > 2 }) (pipe \(pipe.fileHandleForReading.fileDescriptor), \(pipe.fileHandleForWriting.fileDescriptor))")
    }
}
