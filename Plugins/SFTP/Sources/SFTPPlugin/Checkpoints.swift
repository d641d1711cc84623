import Foundation
import SSHCrypto
import TermhostSDK

/// Where a paused transfer stands, kept in the host store so `--resume` in a later run can
/// verify before it seeks: the source's size and modification time when the bytes were read,
/// how many bytes reached the destination's partial file, and the SHA-256 of those bytes.
struct Checkpoint: Codable, Equatable {
    var direction: String          // "download" or "upload"
    var host: String
    var remotePath: String
    var localPath: String
    var partialPath: String        // the local or remote partial file
    var sourceSize: UInt64
    var sourceMtime: UInt64
    var offset: UInt64
    var sha256: String
}

/// The store collection of checkpoints, keyed by direction and destination path.
struct Checkpoints {
    static let collection = "sftp.checkpoints"
    let store: Store?

    static func key(download localPath: String) -> String { "download:" + localPath }
    static func key(upload host: String, _ remotePath: String) -> String { "upload:\(host):\(remotePath)" }

    func load(_ key: String) -> Checkpoint? {
        guard let bytes = try? store?.get(Checkpoints.collection, key) else { return nil }
        return try? JSONDecoder().decode(Checkpoint.self, from: Data(bytes))
    }

    func save(_ key: String, _ checkpoint: Checkpoint) throws(SFTPError) {
        do {
            let data = try JSONEncoder().encode(checkpoint)
            try store?.put(Checkpoints.collection, key, Array(data))
        } catch {
            throw SFTPError(.local, "sftp: cannot save the checkpoint of \(checkpoint.partialPath): \(error)")
        }
    }

    /// Records a transfer before its first byte reaches the partial file: offset 0, vouching for
    /// nothing. A process killed with SIGKILL (or a pause that did not finish in time) then
    /// leaves a partial that `sftp paused` lists, `--resume` starts over and `cancel` removes;
    /// a clean pause replaces it with the bytes that moved, and completion removes it.
    func started(_ job: FileJob, sourceSize: UInt64, sourceMtime: UInt64) throws(SFTPError) {
        try save(job.checkpointKey, Checkpoint(
            direction: job.direction.rawValue, host: job.host, remotePath: job.remotePath, localPath: job.localPath,
            partialPath: job.partialPath, sourceSize: sourceSize, sourceMtime: sourceMtime, offset: 0,
            sha256: SHA256().hexDigest()))
    }

    func remove(_ key: String) { try? store?.remove(Checkpoints.collection, key) }

    func all() -> [(key: String, checkpoint: Checkpoint)] {
        ((try? store?.list(Checkpoints.collection)) ?? []).compactMap { item in
            (try? JSONDecoder().decode(Checkpoint.self, from: Data(item.value))).map { (item.key, $0) }
        }
    }
}
