import Foundation
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

    func remove(_ key: String) { try? store?.remove(Checkpoints.collection, key) }

    func all() -> [(key: String, checkpoint: Checkpoint)] {
        ((try? store?.list(Checkpoints.collection)) ?? []).compactMap { item in
            (try? JSONDecoder().decode(Checkpoint.self, from: Data(item.value))).map { (item.key, $0) }
        }
    }
}
