import Foundation
import Glibc
import TestSupport

/// A device's journal lock in a folder vault, held by the test as another process syncing that
/// device would hold it (flock on the device's directory), so a sync reads the vault and then
/// waits to upload.
final class JournalLock {
    private var fd: Int32 = -1

    /// Locks the directory of `device`'s ID (as `sync status --json` names it) in `vault`.
    init(vault: String, device: TermhostDevice) throws {
        let status = try device.run("sync", "status", "--json").stdout
        guard let id = status.firstMatch(of: /"device":"([0-9a-f]+)"/)?.1 else {
            throw Shell.Failure(description: "sync status names no device: \(status)")
        }
        let dir = "\(vault)/devices/\(id)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        fd = open(dir, O_RDONLY | O_DIRECTORY)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { throw Shell.Failure(description: "cannot lock \(dir)") }
    }

    deinit { release() }

    /// Lets the waiting sync go on.
    func release() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// Whether process `pid` comes to wait for a flock (this one) within 120 s, per /proc/locks
    /// (a bound for a loaded machine, where starting termhost alone once took over 30 s).
    static func isWaited(by pid: Int32) -> Bool {
        // The bound only ends a failing run: a termhost starting under a loaded machine (its
        // plugins loaded and probed, then a pull) was seen to take more than 120 s to get here.
        Wait.until(timeout: 300) {
            ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").split(separator: "\n")
                .contains { $0.contains("-> FLOCK") && $0.split(separator: " ").contains("\(pid)") }
        }
    }
}
