import Foundation

/// The embedded backend: a directory that something else replicates (Syncthing, a network
/// share, a USB stick), or that several processes on one machine share.
///
/// Layout (everything JSON, every file written atomically: temporary file, fsync, link or rename,
/// fsync of the directory):
///   vault.json                          {"format":1,"vault":"<ID>"}; created once, never replaced
///   devices/<device>/<index>.json        that device's journal segments, 1, 2, 3...; never changed
///   devices/<device>/ack.json            the cursor that device has applied (for purging)
///   snapshots/<lamport>.<device>.json    purge snapshots (see FolderVault)
/// Why it is safe with two devices writing at once: each writes only in its own directory and a
/// segment name is taken with link(2), which fails instead of replacing; one device's processes
/// also take an flock on its directory while pushing. Order comes from FolderVault's versions,
/// not from file times or clocks. The cursor is the highest segment index applied per device,
/// so a segment that arrives late (a laptop back online) is still read: a single number could
/// not say that.
public final class FolderBackend: SyncBackend {
    public let root: String
    private var cache: [String: Result<FolderSegment, FolderFormatError>] = [:]

    public init(root: String) {
        self.root = root
    }

    public var summary: String { "folder \(root)" }

    public func open(device: String) throws(SyncBackendError) -> SyncVaultInfo {
        guard FolderVersion.isDeviceID(device) else { throw .invalid("device ID \(device.debugDescription) is not 1-64 letters, digits, - or _") }
        try AtomicFile.makeDirectory("\(root)/devices/\(device)")
        try AtomicFile.makeDirectory("\(root)/snapshots")
        let path = "\(root)/vault.json"
        if AtomicFile.read(path) == nil {
            let fresh = #"{"format":1,"vault":"\#(UUID().uuidString)"}"#
            _ = try AtomicFile.write(Array(fresh.utf8), to: path, .create)   // a peer may win: read theirs
        }
        guard let bytes = AtomicFile.read(path),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let format = object["format"] as? Int, let vault = object["vault"] as? String, !vault.isEmpty else {
            throw .invalid("\(path) is not a Termhost vault description; move it away to start a new vault there")
        }
        guard format == FolderSegment.currentFormat else {
            throw .invalid("\(path) has format \(format), written by a newer Termhost; upgrade to use this vault")
        }
        return SyncVaultInfo(vaultID: vault)
    }

    public func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage {
        let vault = try load()
        var since: [String: Int64] = [:]
        if cursor != .start {
            guard let decoded = FolderBackend.decodeCursor(cursor) else { throw .cursorExpired }
            since = decoded
            // A snapshot dropped tombstones this device never saw: reconcile in full.
            if vault.covers.contains(where: { (since[$0.key] ?? 0) < $0.value }) { throw .cursorExpired }
        }
        var ids = Set<SyncRecordID>()
        if cursor == .start {
            ids = Set(vault.heads.keys)
        } else {
            for (device, segments) in vault.touched {
                for (index, touched) in segments where index > (since[device] ?? 0) { ids.formUnion(touched) }
            }
        }
        let damage = vault.damaged.filter { $0.index > (since[$0.device] ?? 0) }.map(\.damage)
        return SyncPage(records: ids.sorted().compactMap(vault.record), damaged: damage,
                        next: FolderBackend.encodeCursor(vault.vector), more: false)
    }

    public func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        let dir = "\(root)/devices/\(device)"
        try AtomicFile.makeDirectory(dir)
        let lock = Foundation.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw AtomicFile.failure("open \(dir)") }
        defer { Glibc.close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw AtomicFile.failure("lock \(dir)") }

        let vault = try load()
        var index = (vault.vector[device] ?? 0) + 1
        let lamport = vault.maxLamport + 1
        var results: [SyncPushResult?] = []
        var entries: [FolderSegment.Entry] = []
        for change in changes {
            if let version = vault.versionOfChange[change.changeID] {
                results.append(.applied(SyncVersion(version.token)))
                continue
            }
            let current = vault.record(change.id)
            let base = change.base == .purged ? nil : change.base
            guard base?.token == current?.version.token else {
                results.append(.conflict(current ?? .purged(change.id)))
                continue
            }
            // Replaces every head: the engine has seen the displaced ones in the pull before.
            let parents = (vault.heads[change.id] ?? []).map(\.version.token)
            entries.append(FolderSegment.Entry(change: change.changeID, namespace: change.id.namespace,
                                               collection: change.id.collection, key: change.id.key, parents: parents,
                                               payload: change.payload.map { Data($0).base64EncodedString() }))
            results.append(nil)
        }
        if !entries.isEmpty {
            while true {
                let segment = FolderSegment(format: FolderSegment.currentFormat, device: device, index: index, lamport: lamport, entries: entries)
                let bytes = try FolderBackend.encode(segment)
                if try AtomicFile.write(bytes, to: FolderBackend.segmentPath(root, device, index), .create) { break }
                index += 1
            }
        }
        var n = 0
        return results.map { result in
            if let result { return result }
            defer { n += 1 }
            return .applied(SyncVersion(FolderVersion(lamport: lamport, device: device, index: index, entry: n).token))
        }
    }

    /// A device's segments are numbered 1, 2, 3... in its own directory, so the ones right after
    /// the cursor's entry for it, without a gap, are this push's; a segment of another process
    /// of the device leaves a gap, and other devices' entries are never moved.
    public func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor {
        guard var vector = FolderBackend.decodeCursor(cursor) else { return cursor }
        let written = Set(versions.compactMap { FolderVersion($0.token) }.filter { $0.device == device }.map(\.index))
        let from = vector[device] ?? 0
        var last = from
        while written.contains(last + 1) { last += 1 }
        guard last > from else { return cursor }
        vector[device] = last
        return FolderBackend.encodeCursor(vector)
    }

    public func lastChangeID(device: String) throws(SyncBackendError) -> String? {
        try load().lastChange[device]?.1
    }

    public func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError) {
        _ = try AtomicFile.write(Array(#"{"cursor":\#(String(reflecting: cursor.token))}"#.utf8),
                                 to: "\(root)/devices/\(device)/ack.json", .replace)
    }

    public func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int {
        let vault = try load()
        if !force {
            // Only when every device that ever opened the vault (open() made its directory) has
            // applied everything there is, readers included: a device's own ack may already be
            // past its own writes, so the writers alone say nothing.
            let known = ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/devices")) ?? []).filter(FolderVersion.isDeviceID)
            for device in Set(known).union(vault.vector.keys) {
                guard let bytes = AtomicFile.read("\(root)/devices/\(device)/ack.json"),
                      let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String],
                      let acked = object["cursor"].flatMap({ FolderBackend.decodeCursor(SyncCursor($0)) }),
                      vault.vector.allSatisfy({ (acked[$0.key] ?? 0) >= $0.value }) else { return 0 }
            }
        }
        let tombstones = vault.heads.values.filter { !$0.contains { $0.payload != nil } }.count
        guard tombstones > 0 else { return 0 }
        let lamport = vault.maxLamport + 1
        let device = vault.vector.keys.sorted().first ?? "vault"
        let snapshot = vault.snapshot(covering: vault.vector, lamport: lamport)
        let bytes: [UInt8]
        do { bytes = Array(try JSONEncoder().encode(snapshot)) } catch { throw .invalid("cannot encode a snapshot: \(error)") }
        _ = try AtomicFile.write(bytes, to: "\(root)/snapshots/\(lamport).\(device).json", .replace)
        // The snapshot holds everything the covered segments said; they can go.
        for (device, last) in vault.vector {
            for index in 1...max(1, last) { unlink(FolderBackend.segmentPath(root, device, index)) }
        }
        cache.removeAll()
        return tombstones
    }

    public func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool { false }

    public func close() { cache.removeAll() }

    // MARK: - Reading the folder

    private func load() throws(SyncBackendError) -> FolderVault {
        var vault = FolderVault()
        let snapshots = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/snapshots")) ?? []
        let newestFirst = snapshots.compactMap(FolderBackend.snapshotOrder).sorted { $0.0 > $1.0 }
        for (_, name) in newestFirst {
            let path = "\(root)/snapshots/\(name)"
            guard let bytes = AtomicFile.read(path) else { continue }
            if let snapshot = try? JSONDecoder().decode(FolderVault.Snapshot.self, from: Data(bytes)),
               snapshot.format == FolderSegment.currentFormat, snapshot.covers.allSatisfy({ FolderVersion.isDeviceID($0.key) && $0.value >= 0 }) {
                vault.load(snapshot: snapshot)
                break
            }
            vault.damaged.append((device: "", index: Int64.max, damage: SyncDamage(location: path, reason: "not a vault snapshot", raw: bytes)))
        }
        guard let devices = try? FileManager.default.contentsOfDirectory(atPath: "\(root)/devices") else {
            throw .unavailable("\(root)/devices cannot be read: \(String(cString: strerror(errno)))")
        }
        var segments: [FolderSegment] = []
        for device in devices where FolderVersion.isDeviceID(device) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/devices/\(device)")) ?? []
            for name in names {
                guard let index = FolderBackend.segmentIndex(name), index > (vault.covers[device] ?? 0) else { continue }
                let path = FolderBackend.segmentPath(root, device, index)
                if cache[path] == nil {
                    guard let bytes = AtomicFile.read(path) else { continue }
                    do throws(FolderFormatError) {
                        cache[path] = .success(try FolderSegment.parse(bytes, device: device, index: index))
                    } catch {
                        cache[path] = .failure(error)
                        vault.damaged.append((device: device, index: index, damage: SyncDamage(location: path, reason: error.reason, raw: bytes)))
                    }
                } else if case .failure(let error) = cache[path]! {
                    vault.damaged.append((device: device, index: index, damage: SyncDamage(location: path, reason: error.reason, raw: AtomicFile.read(path) ?? [])))
                }
                if case .success(let segment) = cache[path] { segments.append(segment) }
                // A damaged segment still moves the cursor: it is reported once, not re-read forever.
                vault.vector[device] = max(vault.vector[device] ?? 0, index)
            }
        }
        vault.apply(segments)
        return vault
    }

    static func segmentPath(_ root: String, _ device: String, _ index: Int64) -> String {
        let digits = String(index)
        return "\(root)/devices/\(device)/\(String(repeating: "0", count: max(0, 12 - digits.count)))\(digits).json"
    }

    static func segmentIndex(_ name: String) -> Int64? {
        guard name.hasSuffix(".json"), name.utf8.count == 17 else { return nil }
        let digits = name.dropLast(5)
        guard digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int64(digits), n > 0 else { return nil }
        return n
    }

    static func snapshotOrder(_ name: String) -> ((Int64, String), String)? {
        let parts = name.split(separator: ".")
        guard parts.count == 3, parts[2] == "json", let l = Int64(parts[0]), l > 0 else { return nil }
        return ((l, String(parts[1])), name)
    }

    static func encode(_ segment: FolderSegment) throws(SyncBackendError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do { return Array(try encoder.encode(segment)) } catch { throw .invalid("cannot encode a journal segment: \(error)") }
    }

    static func encodeCursor(_ vector: [String: Int64]) -> SyncCursor {
        SyncCursor(vector.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
    }

    /// nil when the text is not a cursor this backend wrote (the engine then reconciles in full).
    static func decodeCursor(_ cursor: SyncCursor) -> [String: Int64]? {
        var vector: [String: Int64] = [:]
        for part in cursor.token.split(separator: ",") {
            let kv = part.split(separator: "=")
            guard kv.count == 2, FolderVersion.isDeviceID(kv[0]), let n = Int64(kv[1]), n >= 0 else { return nil }
            vector[String(kv[0])] = n
        }
        return vector
    }
}
