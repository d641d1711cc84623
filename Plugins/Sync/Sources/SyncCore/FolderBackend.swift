import Foundation

/// The embedded backend: a directory that something else replicates (Syncthing, a network
/// share, a USB stick), or that several processes on one machine share.
///
/// Layout (everything JSON, every file written atomically and reached without following a link:
/// see VaultDirectory):
///   vault.json                          {"format":1,"vault":"<ID>"}; created once, never replaced,
///                                       and only on purpose (`create`): a folder without it
///                                       is no vault (an unmounted share), never a new one
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
    private let files: VaultDirectory
    private var cache: [String: Result<FolderSegment, FolderFormatError>] = [:]

    /// The most bytes a file of each kind may hold; a larger one is refused unread (a peer's
    /// 140 MB file once cost a device 0.9 GB of memory). A push of 500 records makes segments of
    /// a few MiB; a snapshot holds every live record (10,000 hosts: about 60 MiB).
    static let maxSegmentBytes = 64 << 20
    static let maxSnapshotBytes = 512 << 20
    static let maxSmallFileBytes = 64 << 10

    /// Whether `open` may make a new vault when the folder has none. Only when a vault is made
    /// on purpose (`sync backend set folder PATH --create`, or the default folder in
    /// Termhost's own data directory): otherwise a missing `vault.json` means the share is not
    /// mounted, and a new empty vault there would be synced as if every record were deleted.
    public let create: Bool

    public init(root: String, create: Bool = false) {
        self.root = root
        self.create = create
        files = VaultDirectory(root: root)
    }

    public var summary: String { "folder \(root)" }

    public func open(device: String) throws(SyncBackendError) -> SyncVaultInfo {
        guard FolderVersion.isDeviceID(device) else { throw .invalid("device ID \(device.debugDescription) is not 1-64 letters, digits, - or _") }
        _ = try FolderBackend.makeVault(at: root, allowed: create)
        let path = files.path("vault.json")
        let bytes: [UInt8]
        switch try files.read("vault.json", limit: FolderBackend.maxSmallFileBytes) {
        case .bytes(let read): bytes = read
        case .missing: throw .unavailable("\(path) went away while it was opened; the next sync retries")
        case .refused(let why): throw .invalid(why)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let format = object["format"] as? Int, let vault = object["vault"] as? String, !vault.isEmpty else {
            throw .invalid("\(path) is not a Termhost vault description; move it away to start a new vault there")
        }
        guard format == FolderSegment.currentFormat else {
            throw .invalid("\(path) has format \(format), written by a newer Termhost; upgrade to use this vault")
        }
        // Only inside a vault that exists: never a directory tree where the share should be.
        try files.makeDirectory("devices/\(device)")
        try files.makeDirectory("snapshots")
        return SyncVaultInfo(vaultID: vault)
    }

    /// Makes a new vault (the folder and its `vault.json`) at `root` when there is none and
    /// `allowed`; returns whether it made one. A folder without a vault is refused otherwise,
    /// naming the likely cause, with nothing written. Refuses a place `FolderVaultLocation`
    /// refuses, and a `vault.json` that is a link.
    public static func makeVault(at root: String, allowed: Bool) throws(SyncBackendError) -> Bool {
        if let why = FolderVaultLocation.refusal(root) { throw .invalid(why) }
        let files = VaultDirectory(root: root)
        switch try files.read("vault.json", limit: maxSmallFileBytes) {
        case .bytes: return false
        case .refused(let why): throw .invalid(why)
        case .missing: break
        }
        guard allowed else {
            throw .unavailable("no vault at \(root): is the share mounted? Nothing was written there "
                               + "('termhost sync backend set folder \(root) --create' makes a new vault there)")
        }
        try VaultDirectory.makeRoot(root)
        let fresh = #"{"format":1,"vault":"\#(UUID().uuidString)"}"#
        return try files.write(Array(fresh.utf8), to: "vault.json", .create)   // false: a peer made one first
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
        try files.makeDirectory("devices/\(device)")
        let lock = try files.openDirectory("devices/\(device)")
        defer { Glibc.close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw VaultDirectory.failure("lock \(files.path("devices/\(device)"))") }

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
                if try files.write(bytes, to: FolderBackend.segmentName(device, index), .create) { break }
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
        _ = try files.write(Array(#"{"cursor":\#(String(reflecting: cursor.token))}"#.utf8), to: "devices/\(device)/ack.json", .replace)
    }

    public func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int {
        let vault = try load()
        if !force {
            // Only when every device that ever opened the vault (open() made its directory) has
            // applied everything there is, readers included: a device's own ack may already be
            // past its own writes, so the writers alone say nothing.
            let known = (try files.list("devices") ?? []).filter(FolderVersion.isDeviceID)
            for device in Set(known).union(vault.vector.keys) {
                guard case .bytes(let bytes) = try files.read("devices/\(device)/ack.json", limit: FolderBackend.maxSmallFileBytes),
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
        _ = try files.write(bytes, to: "snapshots/\(lamport).\(device).json", .replace)
        // The snapshot holds everything the covered segments said; they can go.
        for (device, last) in vault.vector {
            for index in 1...max(1, last) { files.remove(FolderBackend.segmentName(device, index)) }
        }
        cache.removeAll()
        return tombstones
    }

    public func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool { false }

    /// Numbered per record, 1 its oldest version here: the folder has no sequence all devices
    /// share, and versions order by Lamport stamp, not by time.
    public func history(of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry] {
        var entries: [(FolderVersion, SyncHistoryEntry)] = []
        for (record, heads) in try load().versions(of: id) {
            for (n, head) in heads.enumerated() {
                entries.append((head.version, SyncHistoryEntry(id: record, number: Int64(n + 1), version: SyncVersion(head.version.token),
                                                               payload: head.payload, changeID: head.change, device: head.version.device)))
            }
        }
        return entries.sorted { $0.0 > $1.0 }.prefix(max(0, limit)).map(\.1)
    }

    public func close() { cache.removeAll() }

    // MARK: - Reading the folder

    private func load() throws(SyncBackendError) -> FolderVault {
        var vault = FolderVault()
        let snapshots = try files.list("snapshots") ?? []
        let newestFirst = snapshots.compactMap(FolderBackend.snapshotOrder).sorted { $0.0 > $1.0 }
        for (_, name) in newestFirst {
            let relative = "snapshots/\(name)"
            let bytes: [UInt8]
            switch try files.read(relative, limit: FolderBackend.maxSnapshotBytes) {
            case .missing: continue
            case .refused(let why):
                vault.damaged.append((device: "", index: Int64.max, damage: SyncDamage(location: files.path(relative), reason: why, raw: [])))
                continue
            case .bytes(let read): bytes = read
            }
            if let snapshot = try? JSONDecoder().decode(FolderVault.Snapshot.self, from: Data(bytes)),
               snapshot.format == FolderSegment.currentFormat, snapshot.covers.allSatisfy({ FolderVersion.isDeviceID($0.key) && $0.value >= 0 }) {
                vault.load(snapshot: snapshot)
                break
            }
            vault.damaged.append((device: "", index: Int64.max, damage: SyncDamage(location: files.path(relative), reason: "not a vault snapshot", raw: bytes)))
        }
        guard let devices = try files.list("devices") else {
            throw .unavailable("\(files.path("devices")) cannot be read: it is missing")
        }
        var segments: [FolderSegment] = []
        for device in devices.sorted() where FolderVersion.isDeviceID(device) {
            let names: [String]
            do throws(SyncBackendError) { names = try files.list("devices/\(device)") ?? [] } catch {
                // A peer's directory that is a link (or not a directory) is reported, not
                // followed, and does not stop the others from syncing.
                guard case .invalid(let why) = error else { throw error }
                vault.damaged.append((device: device, index: Int64.max, damage: SyncDamage(location: files.path("devices/\(device)"), reason: why, raw: [])))
                continue
            }
            for name in names {
                guard let index = FolderBackend.segmentIndex(name), index > (vault.covers[device] ?? 0) else { continue }
                let relative = FolderBackend.segmentName(device, index)
                if cache[relative] == nil {
                    let bytes: [UInt8]
                    switch try files.read(relative, limit: FolderBackend.maxSegmentBytes) {
                    case .missing: continue
                    case .refused(let why): cache[relative] = .failure(FolderFormatError(why)); bytes = []
                    case .bytes(let read): bytes = read
                    }
                    if cache[relative] == nil {
                        do throws(FolderFormatError) {
                            cache[relative] = .success(try FolderSegment.parse(bytes, device: device, index: index))
                        } catch {
                            cache[relative] = .failure(error)
                        }
                    }
                    if case .failure(let error) = cache[relative]! {
                        vault.damaged.append((device: device, index: index, damage: SyncDamage(location: files.path(relative), reason: error.reason, raw: bytes)))
                    }
                } else if case .failure(let error) = cache[relative]! {
                    let raw: [UInt8]
                    if case .bytes(let read)? = try? files.read(relative, limit: FolderBackend.maxSegmentBytes) { raw = read } else { raw = [] }
                    vault.damaged.append((device: device, index: index, damage: SyncDamage(location: files.path(relative), reason: error.reason, raw: raw)))
                }
                if case .success(let segment) = cache[relative] { segments.append(segment) }
                // A damaged segment still moves the cursor: it is reported once, not re-read forever.
                vault.vector[device] = max(vault.vector[device] ?? 0, index)
            }
        }
        vault.apply(segments)
        return vault
    }

    /// A segment's name below the vault's root: `devices/<device>/<12 digits>.json`.
    static func segmentName(_ device: String, _ index: Int64) -> String {
        let digits = String(index)
        return "devices/\(device)/\(String(repeating: "0", count: max(0, 12 - digits.count)))\(digits).json"
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
