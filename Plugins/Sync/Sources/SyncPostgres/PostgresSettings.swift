// The fuzz target of PostgresConnectFailure compiles this file with SyncBackend.swift in one module.
#if canImport(SyncCore)
import SyncCore
#endif

/// Where a PostgreSQL vault lives and how to reach it: everything but the password, which the
/// Sync plugin reads from the secrets service and hands to `PostgresBackend` separately, so no
/// value of this type (saved in the store, shown by `sync backend show`) ever holds it.
public struct PostgresSettings: Equatable, Sendable {
    /// libpq's `sslmode`. TLS applies to TCP connections only, not to a Unix socket.
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// A host name or address, or an absolute directory holding the server's Unix socket.
    public var host: String
    public var port: Int
    public var database: String
    /// The PostgreSQL role this user logs in as; team vaults give each user their own.
    public var user: String
    /// The vault's name in that database: a team shares one name.
    public var vault: String
    /// The default for a TCP host is `verify-full`: the server's certificate must chain to
    /// `tlsRootCertificate` (or libpq's `~/.postgresql/root.crt`) and name `host`, as a vault
    /// carries a team's hosts and routes. libpq's own default, `prefer`, lets a man in the
    /// middle drop TLS, so it is never chosen for the user.
    public var tls: TLSMode
    public var tlsRootCertificate: String?
    /// Seconds libpq waits for the connection (its `connect_timeout`).
    public var connectTimeout: Int

    public init(host: String, port: Int = 5432, database: String, user: String, vault: String,
                tls: TLSMode? = nil, tlsRootCertificate: String? = nil, connectTimeout: Int = 10) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.vault = vault
        self.tls = tls ?? (host.hasPrefix("/") ? .disable : .verifyFull)
        self.tlsRootCertificate = tlsRootCertificate
        self.connectTimeout = connectTimeout
    }

    /// Settings from `key=value` options (what `termhost sync backend set postgres` takes):
    /// host, port, dbname, user, vault, sslmode, sslrootcert, connect_timeout. Numbers are
    /// range-checked here, where they enter; an unknown key is refused, not ignored.
    public init(options: [String: String]) throws(SyncBackendError) {
        let known: Set = ["host", "port", "dbname", "user", "vault", "sslmode", "sslrootcert", "connect_timeout"]
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalid("unknown PostgreSQL setting '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        func required(_ key: String) throws(SyncBackendError) -> String {
            guard let v = options[key], !v.isEmpty else { throw .invalid("the PostgreSQL backend needs \(key)=...") }
            return v
        }
        func number(_ key: String, _ range: ClosedRange<Int>, default value: Int) throws(SyncBackendError) -> Int {
            guard let text = options[key] else { return value }
            guard let n = Int(text), range.contains(n) else {
                throw .invalid("bad \(key) '\(text)': expected a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return n
        }
        var tls: TLSMode?
        if let mode = options["sslmode"] {
            guard let m = TLSMode(rawValue: mode) else {
                throw .invalid("bad sslmode '\(mode)': expected one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            tls = m
        }
        self.init(host: try required("host"), port: try number("port", 1...65535, default: 5432),
                  database: try required("dbname"), user: try required("user"), vault: try required("vault"),
                  tls: tls, tlsRootCertificate: options["sslrootcert"],
                  connectTimeout: try number("connect_timeout", 1...300, default: 10))
        try validate()
    }

    /// The settings as `key=value` options, the inverse of `init(options:)` with the defaults
    /// filled in: what the Sync plugin saves and `sync backend show` prints. TLS settings only
    /// for a TCP host, as libpq ignores them over a Unix socket.
    public var options: [(key: String, value: String)] {
        var o = [("host", host), ("port", String(port)), ("dbname", database), ("user", user), ("vault", vault)]
        if !host.hasPrefix("/") {
            o.append(("sslmode", tls.rawValue))
            if let tlsRootCertificate { o.append(("sslrootcert", tlsRootCertificate)) }
        }
        o.append(("connect_timeout", String(connectTimeout)))
        return o.map { (key: $0.0, value: $0.1) }
    }

    /// Refuses values libpq or the schema cannot take: a NUL byte (C strings end there) and
    /// vault names outside 1-64 printable characters.
    public func validate() throws(SyncBackendError) {
        for (name, value) in [("host", host), ("dbname", database), ("user", user), ("vault", vault),
                              ("sslrootcert", tlsRootCertificate ?? "")] where value.utf8.contains(0) {
            throw .invalid("\(name) must not contain a NUL byte")
        }
        guard (1...65535).contains(port) else { throw .invalid("bad port \(port): expected 1 to 65535") }
        guard (1...64).contains(vault.count), !vault.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid("bad vault name: 1 to 64 characters, no control characters")
        }
    }

    /// libpq keywords for `PQconnectdbParams`; the password is appended only when given.
    func connectionParameters(password: String?) -> [(String, String)] {
        var p: [(String, String)] = [("host", host), ("port", String(port)), ("dbname", database), ("user", user),
                                     ("connect_timeout", String(connectTimeout)), ("application_name", "termhost-sync")]
        if !host.hasPrefix("/") {
            p.append(("sslmode", tls.rawValue))
            if let tlsRootCertificate { p.append(("sslrootcert", tlsRootCertificate)) }
        }
        if let password { p.append(("password", password)) }
        return p
    }

    /// "postgresql alice@db.example.com:5432/termhost vault 'team' (TLS verify-full)": what
    /// status shows. Never the password.
    public var summary: String {
        let place = host.hasPrefix("/") ? "\(user)@[\(host)]:\(port)/\(database)" : "\(user)@\(host):\(port)/\(database)"
        let transport = host.hasPrefix("/") ? "Unix socket" : "TLS \(tls.rawValue)"
        return "postgresql \(place) vault '\(vault)' (\(transport))"
    }
}
