import Foundation
import TermhostRegistry

/// Design: discovery reads directories and manifests only; no plugin code runs and no library
/// is opened here. Each directory examined becomes a `PluginRecord` whose `failure` says why it
/// will not be loaded (unreadable, malformed manifest, shadowed by an earlier directory,
/// outside the plugin set in safe mode). `termhost plugins list` and `doctor` print these
/// records as they are.
public struct PluginCatalog: Sendable {
    public var records: [PluginRecord]
    /// Plugin sets found in distribution and system directories, with their files.
    public var pluginSets: [(path: String, set: PluginSet)]
    /// Who signed each signed set, by the set's path (PluginSetSignature); unsigned sets are absent.
    public var pluginSetSigners: [String: PluginSetSigner] = [:]
    /// Problems that belong to no single plugin: malformed plugin sets, unreadable search dirs.
    public var problems: [String]
    /// Every search directory with what was found there ("3 plugins", "does not exist").
    public var searched: [(entry: PluginSearchPath.Entry, note: String)]

    public init(records: [PluginRecord], pluginSets: [(path: String, set: PluginSet)] = [], problems: [String] = [],
                searched: [(entry: PluginSearchPath.Entry, note: String)] = []) {
        self.records = records
        self.pluginSets = pluginSets
        self.problems = problems
        self.searched = searched
    }

    /// trust: whether plugin sets must be signed, and by whom (operator policy).
    public static func discover(_ path: PluginSearchPath, safeMode: Bool = false, trust: PluginSetTrust = .standard) -> PluginCatalog {
        let fm = FileManager.default
        var catalog = PluginCatalog(records: [], pluginSets: [], problems: [], searched: [])
        for entry in path.entries {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: entry.directory, isDirectory: &isDir), isDir.boolValue else {
                catalog.searched.append((entry, "does not exist"))
                continue
            }
            // A plugin set that cannot be read pins nothing; rather than load its directory
            // unverified, every plugin there is refused until it is fixed (fail closed).
            var brokenSet: String? = nil
            if entry.origin == .distribution || entry.origin == .system {
                let setPath = entry.directory + "/plugin-set.json"
                if fm.fileExists(atPath: setPath) {
                    do {
                        let (set, signer) = try loadPluginSet(setPath, trust: trust)
                        catalog.pluginSets.append((setPath, set))
                        if let signer { catalog.pluginSetSigners[setPath] = signer }
                    } catch {
                        brokenSet = error.description
                        catalog.problems.append("plugin set unusable, so the plugins beside it are refused: \(error.description)")
                    }
                } else if trust.required {
                    // Deleting a signed set must not turn its plugins into unpinned ones.
                    brokenSet = "\(setPath) does not exist, and \(trust.requirement)"
                }
            }
            let children: [String]
            do { children = try fm.contentsOfDirectory(atPath: entry.directory).sorted() } catch {
                let reason = String(cString: strerror(access(entry.directory, R_OK | X_OK) == 0 ? EIO : errno))
                catalog.records.append(PluginRecord(directory: entry.directory, origin: entry.origin,
                                                    failure: .unreadableDirectory(path: entry.directory, reason: reason)))
                catalog.searched.append((entry, "unreadable: \(reason)"))
                continue
            }
            var found = 0
            for name in children where !name.hasPrefix(".") {
                let dir = entry.directory + "/" + name
                guard fm.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else { continue }
                found += 1
                var record = examine(dir, origin: entry.origin)
                if let brokenSet, record.failure == nil { record.failure = .pluginSetUnusable(brokenSet) }
                catalog.records.append(record)
            }
            catalog.searched.append((entry, "\(found) plugin director\(found == 1 ? "y" : "ies")"))
        }
        catalog.applyShadowingAndSafeMode(safeMode)
        return catalog
    }

    public static func examine(_ dir: String, origin: PluginSearchPath.Origin) -> PluginRecord {
        var record = PluginRecord(directory: dir, origin: origin)
        guard access(dir, R_OK | X_OK) == 0 else {
            record.failure = .unreadableDirectory(path: dir, reason: String(cString: strerror(errno)))
            return record
        }
        let manifestPath = dir + "/manifest.json"
        // O_NONBLOCK: a FIFO in its place must not block every command; BoundedFile refuses
        // anything but a regular file of at most 1 MiB. The permission check reads the same
        // descriptor that is then read.
        let fd = open(manifestPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            record.failure = errno == ENOENT ? .badManifest("no manifest.json in the plugin directory")
                : .badManifest(RegistryError.unreadableFile(file: manifestPath, reason: String(cString: strerror(errno))).description)
            return record
        }
        defer { close(fd) }
        let bytes: Data
        do { bytes = try BoundedFile.read(fd: fd, file: manifestPath, cap: BoundedFile.manifestCap) } catch {
            record.failure = .badManifest(error.description)
            return record
        }
        record.manifestSHA256 = LibraryHash.hex([UInt8](bytes))
        do { record.manifest = try PluginManifest.decode(bytes, file: manifestPath) } catch {
            record.failure = .badManifest(error.description)
        }
        // Decoded first only so that messages can name the plugin; nothing of it is used.
        if let unsafe = SafePath.problem(fd: fd, path: manifestPath) { record.failure = .unsafePermissions(unsafe) }
        return record
    }

    /// Reads a plugin set through one descriptor, refused like a plugin file when others could
    /// have written it (a plugin set decides what loads in safe mode). Its signature is checked
    /// on the bytes read here, which are the ones decoded.
    public static func loadPluginSet(_ path: String, trust: PluginSetTrust) throws(RegistryError) -> (PluginSet, PluginSetSigner?) {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(file: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        let bytes = try BoundedFile.read(fd: fd, file: path, cap: BoundedFile.pluginSetCap)
        if let unsafe = SafePath.problem(fd: fd, path: path) { throw .invalidDocument(file: path, field: "", detail: unsafe) }
        let signer = try PluginSetSignature.check(setBytes: [UInt8](bytes), setPath: path, trust: trust)
        return (try PluginSet.decode(bytes, file: path), signer)
    }

    /// Safe mode first sets aside everything outside the distribution and system directories,
    /// so a user's copy of a plugin cannot shadow the distribution's pinned one.
    mutating func applyShadowingAndSafeMode(_ safeMode: Bool) {
        if safeMode {
            for i in records.indices where records[i].failure == nil
                && (records[i].origin == .environment || records[i].origin == .user) {
                records[i].failure = .thirdPartyInSafeMode
            }
        }
        var firstByID: [String: String] = [:]
        for i in records.indices {
            guard records[i].failure == nil, let id = records[i].manifest?.id else { continue }
            if let first = firstByID[id] {
                records[i].failure = .shadowed(by: first)
                continue
            }
            firstByID[id] = records[i].directory
            if safeMode && pin(for: id) == nil {
                records[i].failure = .notInPluginSet
            }
        }
        refuseClaimedFeatures()
    }

    /// A feature ID belongs to the plugin whose ID is its longest namespace prefix (see
    /// `Namespace`). A manifest can only name IDs inside its own namespace (checked when it is
    /// read), but namespaces nest: plugin `org.termhost` may not declare `org.termhost.ssh`
    /// when plugin `org.termhost.ssh` is installed. The claimant is refused, naming both.
    mutating func refuseClaimedFeatures() {
        let ids = records.compactMap { $0.failure == nil ? $0.manifest?.id : nil }
        for i in records.indices {
            guard records[i].failure == nil, let m = records[i].manifest else { continue }
            for f in m.features {
                if let owner = Namespace.owner(of: f.id.rawValue, among: ids), owner != m.id {
                    let dir = records.first { $0.manifest?.id == owner }?.directory ?? "?"
                    records[i].failure = .featureClaimed(RegistryError.featureOutsideNamespace(f.id, plugin: m.id, owner: owner).description
                                                         + "; refused, and '\(owner)' (\(dir)) keeps it")
                    break
                }
            }
        }
    }

    /// The plugin set entry that pins this plugin ID, with the set's file, if any.
    public func pin(for pluginID: String) -> (entry: PluginSet.Entry, path: String)? {
        for (path, set) in pluginSets {
            if let e = set.entry(for: pluginID) { return (e, path) }
        }
        return nil
    }
}

/// One plugin directory and everything decided about it, from discovery to init.
public struct PluginRecord: Sendable {
    public var directory: String
    public var origin: PluginSearchPath.Origin
    public var manifest: PluginManifest?
    public var failure: LoadFailure?
    /// Filled by the preflight checks.
    public var libraryPath: String?
    public var size: Int64?
    public var mtimeNanoseconds: Int64?
    public var sha256: String?
    /// sha256 of manifest.json as read; part of the probe cache key.
    public var manifestSHA256: String?
    /// Open, verified descriptors of the libraries its plugin set pins (PinnedLibraries), loaded
    /// before the plugin; whoever closes the plugin's descriptor closes these.
    public var pinnedLibraryDescriptors: [Int32] = []
    /// "cached" when the probe cache was current, "probed" when the probe ran, nil if not reached.
    public var probe: String?
    public var probeMilliseconds: Double?
    public var loadMilliseconds: Double?
    public var initMilliseconds: Double?

    public init(directory: String, origin: PluginSearchPath.Origin, manifest: PluginManifest? = nil,
                failure: LoadFailure? = nil) {
        self.directory = directory
        self.origin = origin
        self.manifest = manifest
        self.failure = failure
    }

    /// Closes `pinnedLibraryDescriptors` (the plugin was loaded, refused or only inspected).
    public mutating func closePinnedLibraries() {
        pinnedLibraryDescriptors.forEach { close($0) }
        pinnedLibraryDescriptors = []
    }

    /// "plugin org.example.hello (/path/to/dir)" for messages.
    public var label: String {
        if let id = manifest?.id { return "plugin '\(id)' (\(directory))" }
        return "plugin directory \(directory)"
    }
}
