import Foundation

/// Design: a library is in one of three states in this cache: unknown (no entry for its path),
/// stale (size, mtime or sha256 of the library, or the sha256 of its manifest, differ from the
/// entry) or current. The manifest is part of the key because the probe compares the two: a
/// fixed manifest must lift a quarantine, and an edited one must be checked again. Only unknown and stale
/// libraries are probed. Both outcomes are cached: a passed probe with what the plugin
/// reported, or a quarantine with its cause, so a crashing plugin is not re-run on every start
/// but is probed again as soon as its file changes. The file is
/// `$XDG_CACHE_HOME/termhost/probe-cache.json`; a corrupt cache is discarded (it is only a cache).
public struct ProbeCache: Sendable {
    public enum Outcome: Sendable, Equatable, Codable {
        case passed(ProbeReport)
        case quarantined(LoadFailure)
    }

    public struct Entry: Sendable, Equatable, Codable {
        public var size: Int64
        public var mtimeNanoseconds: Int64
        public var sha256: String
        public var manifestSHA256: String?
        public var outcome: Outcome
        public var probeMilliseconds: Double
    }

    public let path: String?
    public private(set) var entries: [String: Entry]
    private var dirty = false

    /// An in-memory cache (tests, `plugins check`).
    public static func temporary() -> ProbeCache { ProbeCache(path: nil, entries: [:]) }

    public static func load(path: String) -> ProbeCache {
        guard let data = FileManager.default.contents(atPath: path),
              let entries = try? JSONDecoder().decode([String: Entry].self, from: data) else {
            return ProbeCache(path: path, entries: [:])
        }
        return ProbeCache(path: path, entries: entries)
    }

    init(path: String?, entries: [String: Entry]) {
        self.path = path
        self.entries = entries
    }

    /// The cached outcome when the entry for this library is current, else nil.
    public func current(for record: PluginRecord) -> Entry? {
        guard let lib = record.libraryPath, let e = entries[lib], e.size == record.size,
              e.mtimeNanoseconds == record.mtimeNanoseconds, e.sha256 == record.sha256,
              e.manifestSHA256 == record.manifestSHA256 else { return nil }
        return e
    }

    /// Records an outcome. A probe that could not run at all says nothing about the plugin and
    /// is not cached.
    public mutating func store(_ outcome: Outcome, for record: PluginRecord, milliseconds: Double) {
        if case .quarantined(.probeUnavailable) = outcome { return }
        guard let lib = record.libraryPath, let size = record.size, let mtime = record.mtimeNanoseconds,
              let hash = record.sha256 else { return }
        entries[lib] = Entry(size: size, mtimeNanoseconds: mtime, sha256: hash, manifestSHA256: record.manifestSHA256, outcome: outcome,
                             probeMilliseconds: milliseconds)
        dirty = true
    }

    /// Writes the cache if it changed (atomically, via a temporary file and rename).
    public mutating func save() {
        guard dirty, let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(entries) else { return }
        let dir = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if FileManager.default.createFile(atPath: path + ".tmp", contents: data) {
            rename(path + ".tmp", path)
            dirty = false
        }
    }
}
