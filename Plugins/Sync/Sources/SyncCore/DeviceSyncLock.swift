import Foundation

/// One sync at a time on a device's store, across its processes. Every long-running `termhost`
/// process runs a sync loop and the engine saves its whole state, so two syncing at once undo
/// each other's writes: a `sync pause` or `reset` from one process, or the last change this
/// device sent, which the restored-backup check compares (a stale one turns other devices'
/// deletes into false conflicts). An flock(2) on a file beside the store: the kernel drops it
/// when its holder exits, however it exits. The loop only tries it; commands wait, bounded.
public final class DeviceSyncLock: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Runs `body` holding the lock; nil at once (body not run) when another holder has it.
    public func ifFree<T>(_ body: () throws -> T) throws -> T? {
        let fd = try openFile()
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        return try body()
    }

    /// Runs `body` holding the lock, waiting at most `seconds` for it; `waiting` is called once
    /// when it must wait. Throws, body not run, when it stays held that long.
    public func holding<T>(waitingAtMost seconds: Double, waiting: () -> Void, _ body: () throws -> T) throws -> T {
        let fd = try openFile()
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(seconds)
        var told = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else {
                throw SyncEngineError("another termhost process on this device has been syncing for over \(Int(seconds)) s; nothing changed, try again when it has finished")
            }
            if !told { waiting() }
            told = true
            usleep(20_000)
        }
        return try body()
    }

    private func openFile() throws -> Int32 {
        try? FileManager.default.createDirectory(atPath: FolderVaultLocation.parent(path), withIntermediateDirectories: true)
        // Close-on-exec: a program this process starts (a ProxyCommand) must not keep it held.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SyncEngineError("cannot open the sync lock \(path): \(String(cString: strerror(errno)))") }
        return fd
    }
}
