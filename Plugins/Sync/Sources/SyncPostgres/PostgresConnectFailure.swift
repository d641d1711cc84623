// The fuzz target compiles this file with PostgresSettings.swift and SyncBackend.swift in one module.
#if canImport(SyncCore)
import SyncCore
#endif

/// What a failed libpq connection means for the user: libpq's own text for TLS failures says
/// neither which Termhost setting is involved nor what to change ("SSL error: certificate verify
/// failed", "Either provide the file or change sslmode..."), so those are rewritten naming
/// `sslrootcert` and `host`; everything else keeps libpq's or the server's text with a remedy.
/// Messages name no backend: the engine puts its summary in front of every one. The text is
/// untrusted (the server writes the FATAL part): it is only matched and quoted here, and made
/// visible where it is printed. Fuzzed by Tests/Fuzz/PostgresConnectFailureFuzz.swift.
enum PostgresConnectFailure {
    /// `message` is libpq's `PQerrorMessage` after a failed connect.
    static func explain(_ m: String, settings: PostgresSettings) -> SyncBackendError {
        let caFile = settings.tlsRootCertificate.map { "sslrootcert (\($0))" } ?? "~/.postgresql/root.crt"
        if let missing = m.firstMatch(of: #/root certificate file "([^"]*)" does not exist/#)?.1 {
            return .invalid("no CA certificate to check the server's TLS certificate with (sslmode=\(settings.tls.rawValue)): "
                            + "set sslrootcert to the file of the CA that signed it ('termhost sync backend set postgres ... "
                            + "sslrootcert=/path/ca.pem'), or put it at \(missing)")
        }
        if m.contains("certificate verify failed") {
            return .invalid("the server's TLS certificate does not verify against the CA in \(caFile): signed by another CA, "
                            + "or expired; set sslrootcert to the CA that signed the server's certificate (ask the database's administrator)")
        }
        if let names = m.firstMatch(of: #/server certificate for (.*) does not match host name "([^"]*)"/#) {
            return .invalid("the server's TLS certificate is for \(names.1), not for host \"\(names.2)\" "
                            + "(sslmode=\(settings.tls.rawValue) checks the name); set host to a name the certificate carries")
        }
        let reason = m.firstMatch(of: #/FATAL:  (.*)/#).map { String($0.1) } ?? m
        if m.contains("password authentication failed") || m.contains("no password supplied") {
            return .denied("\(reason); save the role's password again with 'termhost sync backend set postgres ... --password-stdin'")
        }
        if m.contains("no pg_hba.conf entry") && m.contains("no encryption") {
            return .denied("\(reason); the server takes this role only over TLS: leave sslmode at verify-full and set sslrootcert")
        }
        if m.contains("does not exist") || m.contains("no pg_hba.conf entry") {
            return .denied("\(reason); ask the database's administrator for a role and access")
        }
        if m.contains("certificate") || m.contains("SSL") {
            return .invalid("\(m); set sslrootcert to the CA certificate that signed the server's, or check sslmode")
        }
        return .unavailable(m)
    }
}
