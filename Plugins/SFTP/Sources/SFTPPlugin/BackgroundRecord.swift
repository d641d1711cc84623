import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText; the fuzz target compiles VisibleText.swift in instead
#endif

// This file uses Foundation (JSON), VisibleText, Pacing, TransferDirection and ConflictPolicy
// only, so the fuzz target compiles it as it is.

/// A transfer queued with `--background`, as kept in the host store so that it outlives the
/// daemon: what was asked (the same words as the command line), whether the user still wants
/// it to run, and how it ended. The bytes themselves are tracked by the checkpoints.
struct BackgroundRecord: Codable, Equatable, Sendable {
    var id: Int
    var direction: TransferDirection
    var host: String
    var remote: String
    /// Absolute: resolved against the client's working directory when queued.
    var local: String
    var recursive: Bool
    var conflict: ConflictPolicy?
    /// Bytes per second, 0 for no limit.
    var limit: UInt64
    /// The user wants it to run: false once paused by `transfers pause` (a shutdown's pause
    /// keeps it, so the next daemon goes on).
    var wanted: Bool
    /// What it creates, once planned: the local (download) or the server's absolute remote
    /// (upload) path of its file or top directory. Its checkpoints lie at or below it.
    var root: String?
    /// Set once it ended for good: "done", "failed: ..." or "cancelled".
    var ended: String?
    var queued: Double

    /// IDs a record may have: far more than anyone queues, far below where +1 could trap.
    static let ids = 1...(1 << 40)

    /// A record from the store's bytes; nil when they are not one this version reads.
    static func decoded(_ bytes: [UInt8]) -> BackgroundRecord? {
        try? JSONDecoder().decode(BackgroundRecord.self, from: Data(bytes))
    }

    var from: String { direction == .download ? "\(host):\(remote)" : local }
    var to: String { direction == .download ? local : "\(host):\(remote)" }

    /// What a record read back from the store must be before it runs (the store is a file
    /// anyone with the user's rights may edit): nil when usable, or why not.
    var problem: String? {
        if !BackgroundRecord.ids.contains(id) { return "its ID \(id) is not from 1 to \(BackgroundRecord.ids.upperBound)" }
        if host.isEmpty || host.utf8.first == UInt8(ascii: "-") { return "its host '\(VisibleText.of(host))' is not a host" }
        if remote.isEmpty { return "it names no remote path" }
        // Bytes, not Characters: "/" followed by a combining mark is one Character.
        if local.utf8.first != UInt8(ascii: "/") { return "its local path '\(VisibleText.of(local))' is not absolute" }
        if let root, root.utf8.first != UInt8(ascii: "/") { return "its target '\(VisibleText.of(root))' is not absolute" }
        if limit > Pacing.maxBytesPerSecond { return "its bandwidth limit \(limit) B/s is out of range" }
        return nil
    }
}
