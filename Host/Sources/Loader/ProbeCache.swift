import Foundation
import Glibc
import TermhostRegistry
import TermhostSDK

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
        /// Which probe passed it (`ProbeCache.probeVersion`); nil: one from before version 2.
        public var probeVersion: Int? = nil
        /// When it was quarantined (seconds since 1970), for `plugins quarantine list`.
        public var quarantinedAt: Double? = nil
    }

    /// 2: the probe also creates, activates, shuts down and destroys each feature. A plugin
    /// passed by an older probe is probed again: it never ran its features there.
    public static let probeVersion = 2

    public let path: String?
    public private(set) var entries: [String: Entry]
    private var dirty = false
    /// Why the file on disk was set aside (too large, not a regular file), for `doctor`.
    public private(set) var problem: String?

    /// Far more than any real cache holds (about 1 KiB per plugin); a larger file is not read.
    public static let cap = 8 << 20

    /// An in-memory cache (tests, `plugins check`).
    public static func temporary() -> ProbeCache { ProbeCache(path: nil, entries: [:]) }

    /// Reads the cache (never following a symbolic link, at most `cap` bytes). A missing or
    /// corrupt file is an empty cache; one that cannot be used at all is too, and says why.
    public static func load(path: String) -> ProbeCache {
        func setAside(_ why: String) -> ProbeCache {
            var cache = ProbeCache(path: path, entries: [:])
            cache.problem = "probe cache set aside, every plugin is probed again: \(why)"
            return cache
        }
        // It decides which plugins run unprobed and which stay quarantined: one someone else
        // could have written, or kept in a directory someone else can write, is set aside (and
        // replaced by the next save), never believed. What is read is the descriptor that was
        // checked, so the file cannot be swapped between the check and the read.
        if let refused = PrivateFile.refusal(at: PathText.parent(path)) { return setAside(refused) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { return ProbeCache(path: path, entries: [:]) }
            return setAside("\(path): \(e == ELOOP ? "it is a symbolic link, which is not followed here" : String(cString: strerror(e)))")
        }
        defer { close(fd) }
        if let refused = PrivateFile.check(fd: fd, path: path, privateMode: 0o600, fix: "chmod 600 \(path)") { return setAside(refused) }
        let data: Data
        do { data = try BoundedFile.read(fd: fd, file: path, cap: cap) } catch { return setAside(error.description) }
        guard let entries = try? JSONDecoder().decode([String: Entry].self, from: data) else {
            return ProbeCache(path: path, entries: [:])
        }
        return ProbeCache(path: path, entries: entries)
    }

    init(path: String?, entries: [String: Entry]) {
        self.path = path
        self.entries = entries
    }

    /// The cached outcome when the entry for this library is current, else nil.
    /// A timeout says as much about the host's setting as about the plugin: a quarantine for
    /// a timeout is current only under the same timeout (a longer one tries the plugin again;
    /// `TERMHOST_PROBE_TIMEOUT=0.1` once cached cannot keep every plugin out afterwards).
    public func current(for record: PluginRecord, timeout: Double? = nil) -> Entry? {
        guard let lib = record.libraryPath, let e = entries[lib], e.size == record.size,
              e.mtimeNanoseconds == record.mtimeNanoseconds, e.sha256 == record.sha256,
              e.manifestSHA256 == record.manifestSHA256 else { return nil }
        if case .quarantined(.probeTimedOut(let seconds, _)) = e.outcome, let timeout, seconds != timeout { return nil }
        if case .passed = e.outcome, e.probeVersion != ProbeCache.probeVersion { return nil }
        return e
    }

    /// Records an outcome. A probe that could not run at all says nothing about the plugin and
    /// is not cached.
    public mutating func store(_ outcome: Outcome, for record: PluginRecord, milliseconds: Double) {
        if case .quarantined(.probeUnavailable) = outcome { return }
        guard let lib = record.libraryPath, let size = record.size, let mtime = record.mtimeNanoseconds,
              let hash = record.sha256 else { return }
        var quarantinedAt: Double? = nil
        if case .quarantined = outcome { quarantinedAt = Date().timeIntervalSince1970 }
        entries[lib] = Entry(size: size, mtimeNanoseconds: mtime, sha256: hash, manifestSHA256: record.manifestSHA256, outcome: outcome,
                             probeMilliseconds: milliseconds, probeVersion: ProbeCache.probeVersion, quarantinedAt: quarantinedAt)
        dirty = true
    }

    /// Quarantines the library at `library` for a crash the host recorded, when the entry
    /// for it is of the very file that crashed (same sha256): a replaced file is innocent
    /// until probed. false when there is no such entry.
    public mutating func quarantine(library: String, sha256: String, failure: LoadFailure) -> Bool {
        guard var e = entries[library], e.sha256 == sha256, path != nil else { return false }
        e.outcome = .quarantined(failure)
        e.quarantinedAt = Date().timeIntervalSince1970
        entries[library] = e
        dirty = true
        return true
    }

    /// Forgets what is known about `library` (lifting a quarantine): the next start probes it.
    public mutating func forget(library: String) {
        guard entries.removeValue(forKey: library) != nil else { return }
        dirty = true
    }

    /// Writes the cache if it changed: a new file created with mode 0600 (O_EXCL, so never
    /// through a planted symbolic link), in a 0700 directory, renamed into place.
    public mutating func save() {
        guard dirty, let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(entries), data.count <= ProbeCache.cap else { return }
        guard PrivateFile.prepare(ownDirectory: PathText.parent(path)) == nil else { return }
        let tmp = path + ".tmp"
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = [UInt8](data)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        close(fd)
        guard written == bytes.count, rename(tmp, path) == 0 else { unlink(tmp); return }
        dirty = false
    }
}
