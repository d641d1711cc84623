import Foundation
import Glibc
import SSHCrypto
import TermhostSDK

/// OpenSSH `known_hosts` files, read by us: libssh2 1.10's reader stops at the first line it does
/// not understand (`@cert-authority`, `@revoked`), which would silently drop every key after it.
///
/// Each file is read whole, as bytes, once per connection attempt, and parsed by
/// KnownHostsParser. A line that cannot be used is skipped with a warning naming file:line and
/// the rest of the file still applies (as OpenSSH does). A file that exists but cannot be read
/// whole (permission denied, a directory, an I/O error, over `maximumFileSize`) fails the
/// connection: a revoked or changed key in it must not turn into an "accept once" question.
///
/// Supported: plain host patterns (with `*`, `?` and `!` negation), `[host]:port`, hashed
/// `|1|salt|hash` entries, the `@revoked` marker (a revoked key is refused for every host) and
/// `@cert-authority` lines, whose key vouches for the host certificates it signed (HostKeyTrust
/// checks the certificate); such a line never makes a plain key trusted.
///
/// The keys accepted in Termhost and synced between devices (SyncedHostKeys) are added after
/// the files and follow the same rules as one more file.
struct KnownHosts {
    struct Entry: Equatable {
        let entry: KnownHostsEntry
        let file: String
        var line: Int { entry.line }
        var marker: KnownHostsEntry.Marker { entry.marker }
        var keyType: String { entry.keyType }
        var key: [UInt8] { entry.key }
    }

    /// Larger files are refused, not read: 64 MiB is about 700,000 hashed ed25519 lines, far
    /// beyond any real file, and keeps a hostile or runaway file from costing the memory and time
    /// of every connection.
    static let maximumFileSize = 64 << 20

    private(set) var entries: [Entry] = []
    private(set) var warnings: [String] = []
    /// Keys accepted in Termhost on the devices of the vault, by host ID (SyncedHostKeys).
    private(set) var synced: [String: [SyncedHostKeyRecord]] = [:]
    /// A host ID costs milliseconds (PBKDF2), and a connection asks twice for its host (the key
    /// types to offer, then the check): derived once.
    private let hostIDs = HostIDs()

    private final class HostIDs {
        private var ids: [String: String] = [:]
        func id(host: String, port: Int) -> String {
            let name = KnownHosts.lookupName(host: host, port: port)
            if let id = ids[name] { return id }
            let id = SyncedHostKeys.hostID(host: host, port: port)
            ids[name] = id
            return id
        }
    }

    init() {}

    /// Reads files in order; a missing file is fine (nothing known yet); a file that exists but
    /// cannot be read whole throws (the connection must fail closed).
    init(files: [String]) throws(SSHError) {
        for file in files {
            guard let bytes = try KnownHosts.read(file) else { continue }
            parse(bytes, file: file)
        }
    }

    mutating func parse(_ bytes: [UInt8], file: String) {
        let (parsed, problems) = KnownHostsParser.parse(bytes)
        entries.reserveCapacity(entries.count + parsed.count)
        for e in parsed { entries.append(Entry(entry: e, file: file)) }
        // Every connection prints these: a file of garbage must not flood the terminal.
        for p in problems.prefix(KnownHosts.maximumWarnings) { warnings.append("\(VisibleText.of(file)):\(p.line): \(p.reason)") }
        if problems.count > KnownHosts.maximumWarnings {
            warnings.append("\(VisibleText.of(file)): \(problems.count - KnownHosts.maximumWarnings) more lines skipped (not shown)")
        }
    }

    /// Warnings shown a file; the rest are counted in one line.
    static let maximumWarnings = 20

    mutating func parse(_ text: String, file: String) { parse(Array(text.utf8), file: file) }

    /// Adds the synced records (read after the files; they count as one more file).
    mutating func add(synced records: [SyncedHostKeyRecord], warnings recordWarnings: [String]) {
        for r in records { synced[r.hostID, default: []].append(r) }
        warnings += recordWarnings
    }

    /// The synced records for this host; no host ID is derived when nothing is synced.
    private func syncedKeys(host: String, port: Int) -> [SyncedHostKeyRecord] {
        synced.isEmpty ? [] : synced[hostIDs.id(host: host, port: port)] ?? []
    }

    /// The whole file, nil when it does not exist. Opened without blocking (a FIFO planted in its
    /// place must not hang the connection) and checked to be a regular file of at most
    /// `maximumFileSize` bytes.
    static func read(_ path: String) throws(SSHError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw unreadable(path, String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw unreadable(path, String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw unreadable(path, info.st_mode & S_IFMT == S_IFDIR ? "it is a directory" : "it is not a regular file")
        }
        guard Int(info.st_size) <= maximumFileSize else { throw tooLarge(path, Int(info.st_size)) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var used = 0
        while true {
            if used == bytes.count {
                // The file grew while being read.
                guard bytes.count <= maximumFileSize else { throw tooLarge(path, bytes.count) }
                bytes.append(contentsOf: [UInt8](repeating: 0, count: min(bytes.count, maximumFileSize + 1 - bytes.count) + 1))
            }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, $0.count - used) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw unreadable(path, String(cString: strerror(errno)))
            }
            used += n
        }
        guard used <= maximumFileSize else { throw tooLarge(path, used) }
        bytes.removeSubrange(used...)
        return bytes
    }

    static func unreadable(_ path: String, _ reason: String) -> SSHError {
        SSHError("""
        ssh: cannot read the known hosts file \(VisibleText.of(path)): \(reason).
        Host key verification failed: termhost does not connect while a known hosts file it checks cannot be read \
        (a revoked or changed key in it would go unnoticed).
        """, kind: .refused)
    }

    static func tooLarge(_ path: String, _ size: Int) -> SSHError {
        SSHError("""
        ssh: the known hosts file \(VisibleText.of(path)) is \(size) bytes, more than termhost reads (64 MiB, \(maximumFileSize) bytes).
        Host key verification failed: remove stale entries (ssh-keygen -R HOST -f FILE) to bring it under the limit.
        """, kind: .refused)
    }

    /// The name encoded at the start of an SSH public key blob ("ssh-ed25519").
    static func keyTypeName(in blob: [UInt8]) -> String? {
        KnownHostsParser.keyTypeBytes(in: blob).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The name a host is looked up by: "host" on port 22, "[host]:port" otherwise.
    static func lookupName(host: String, port: Int) -> String { port == 22 ? host : "[\(host)]:\(port)" }

    enum Verdict: Equatable {
        /// The key matches an entry (file:line).
        case known(file: String, line: Int)
        /// No entry for this host and key type; `otherTypes` lists key types known for the host.
        case unknown(otherTypes: [String])
        /// An entry for this host has the same key type but another key (file:line to fix).
        case changed(file: String, line: Int)
        /// The key is marked @revoked (file:line).
        case revoked(file: String, line: Int)
        /// The key matches one accepted in Termhost and synced (on this device or another).
        case knownSynced
        /// A key of this type accepted in Termhost and synced for this host is another key.
        case changedSynced(synced: [UInt8])
    }

    /// One pass per question, cheapest test first: the key (or key type) is compared before the
    /// host, so a hashed line costs an HMAC only when its key could matter.
    ///
    /// As OpenSSH with several files: a `@revoked` line wins over everything, synced records
    /// included; a key listed for the host in a file is known, and another key of its type in a
    /// file is a changed key. The files are the user's own decision and win over the synced
    /// records, which anyone able to write the vault can add to: a synced record answers only
    /// for a host and key type the files do not list.
    ///
    /// Off port 22, a host unknown as `[host]:port` is looked up once more by its bare name, and
    /// only a known key there counts (ssh's "checking without port identifier"); an alias is
    /// always looked up alone, on port 22.
    func check(host: String, port: Int, keyType: String, key: [UInt8]) -> Verdict {
        let verdict = check(lookup: host, port: port, keyType: keyType, key: key)
        guard case .unknown = verdict, port != 22 else { return verdict }
        switch check(lookup: host, port: 22, keyType: keyType, key: key) {
        case .known(let file, let line): return .known(file: file, line: line)
        case .knownSynced: return .knownSynced
        default: return verdict
        }
    }

    private func check(lookup host: String, port: Int, keyType: String, key: [UInt8]) -> Verdict {
        if let r = revocation(of: key) { return .revoked(file: r.file, line: r.line) }
        let forHost = hostMatcher(host: host, port: port)
        if let k = entries.first(where: { $0.marker == .none && $0.key == key && forHost($0) }) { return .known(file: k.file, line: k.line) }
        if let c = entries.first(where: { $0.marker == .none && $0.keyType == keyType && forHost($0) }) {
            return .changed(file: c.file, line: c.line)
        }
        let syncedForHost = syncedKeys(host: host, port: port)
        if syncedForHost.contains(where: { $0.key == key }) { return .knownSynced }
        if let s = syncedForHost.first(where: { $0.keyType == keyType }) { return .changedSynced(synced: s.key) }
        return .unknown(otherTypes: keyTypes(matching: forHost, synced: syncedForHost))
    }

    /// The `@revoked` line of a key (a host's key, or a CA's), whatever host it names.
    func revocation(of key: [UInt8]) -> Entry? {
        entries.first { $0.marker == .revoked && $0.key == key }
    }

    /// The `@cert-authority` line for this host with the CA key `ca` (`[host]:port`, then off
    /// port 22 the bare host, as `check`): nil when that CA does not vouch for the host (its
    /// certificate is then checked as the plain key inside, as ssh does).
    func certificateAuthority(host: String, port: Int, key ca: [UInt8]) -> Entry? {
        for p in port == 22 ? [22] : [port, 22] {
            let forHost = hostMatcher(host: host, port: p)
            if let e = entries.first(where: { $0.marker == .certAuthority && $0.key == ca && forHost($0) }) { return e }
        }
        return nil
    }

    /// Whether a `@cert-authority` line names this host (either way): certificates are then
    /// asked for first.
    func hasCertificateAuthority(host: String, port: Int) -> Bool {
        (port == 22 ? [22] : [port, 22]).contains { p in
            let forHost = hostMatcher(host: host, port: p)
            return entries.contains { $0.marker == .certAuthority && forHost($0) }
        }
    }

    /// The key types of the plain (unmarked) entries and synced records for this host, sorted:
    /// what OpenSSH's client puts first in its host key algorithms, so that the server shows a
    /// key it can check.
    func keyTypes(host: String, port: Int) -> [String] {
        keyTypes(matching: hostMatcher(host: host, port: port), synced: syncedKeys(host: host, port: port))
    }

    private func keyTypes(matching forHost: (Entry) -> Bool, synced: [SyncedHostKeyRecord]) -> [String] {
        var types = Set(synced.map(\.keyType))
        for e in entries where e.marker == .none && !types.contains(e.keyType) && forHost(e) { types.insert(e.keyType) }
        return types.sorted()
    }

    /// Whether an entry's host field names the host: "[host]:port" off port 22, hashed or not.
    private func hostMatcher(host: String, port: Int) -> (Entry) -> Bool {
        let name = Array(KnownHosts.lookupName(host: host, port: port).utf8).map(KnownHostsParser.lowercased)
        let hasher = HMACSHA1()
        return { e in
            switch e.entry.hosts {
            case .patterns(let p): KnownHostsParser.matches(patterns: p, name: name)
            case .hashed(let salt, let hash): hasher.matches(key: salt, data: name, expected: hash)
            }
        }
    }

    /// A comma-separated pattern list (ssh_config's Host lines, known_hosts host fields) against
    /// names: some positive pattern matches and no negated one does; hashed fields compare
    /// HMAC-SHA1(salt, name).
    static func matches(_ patterns: String, _ names: [String]) -> Bool {
        let lowered = names.map { Array($0.utf8).map(KnownHostsParser.lowercased) }
        if patterns.hasPrefix("|1|") {
            let parts = patterns.split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 4, let salt = Base64.decode(parts[2]), let hash = Base64.decode(parts[3]) else { return false }
            let hasher = HMACSHA1()
            return lowered.contains { hasher.matches(key: salt, data: $0, expected: hash) }
        }
        let p = Array(patterns.utf8).map(KnownHostsParser.lowercased)
        return lowered.contains { KnownHostsParser.matches(patterns: p, name: $0) }
    }

    /// A hashed line for a newly trusted key, as `ssh-keygen -H` writes them.
    static func hashedLine(host: String, port: Int, keyType: String, key: [UInt8]) -> String {
        let salt = SecureRandom.bytes(20)
        let name = Array(lookupName(host: host, port: port).utf8).map(KnownHostsParser.lowercased)
        let hash = HMACSHA1.mac(key: salt, data: name)
        return "|1|\(Base64.encode(salt))|\(Base64.encode(hash)) \(keyType) \(Base64.encode(key))"
    }

    /// OpenSSH's fingerprint format: "SHA256:" and unpadded base64 of the key blob's SHA-256.
    static func fingerprint(_ key: [UInt8]) -> String { "SHA256:" + Base64.encode(SHA256.digest(key), padding: false) }
}
