import Foundation

/// X.509 certificates made with the `openssl` CLI for tests of TLS against real servers: a
/// private CA and server certificates it signs, P-256 keys (fast to make), valid two days.
public enum TestCertificates {
    public struct Issued: Sendable {
        /// PEM certificate.
        public let certificate: String
        /// PEM private key, unencrypted.
        public let key: String
    }

    /// A self-signed CA certificate named `name`, written as `<file>.crt` and `<file>.key` in `directory`.
    public static func authority(_ name: String, file: String, in directory: String) throws -> Issued {
        let made = Issued(certificate: directory + "/" + file + ".crt", key: directory + "/" + file + ".key")
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", made.key, "-out", made.certificate, "-days", "2", "-subj", "/CN=\(name)",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        return made
    }

    /// A server certificate for the DNS names `names` only (subject CN the first of them; no
    /// IP address), signed by `authority`.
    public static func server(_ names: [String], signedBy authority: Issued, file: String, in directory: String) throws -> Issued {
        let made = Issued(certificate: directory + "/" + file + ".crt", key: directory + "/" + file + ".key")
        try openssl(["req", "-x509", "-CA", authority.certificate, "-CAkey", authority.key,
                     "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", made.key, "-out", made.certificate, "-days", "2", "-subj", "/CN=\(names[0])",
                     "-addext", "subjectAltName=" + names.map { "DNS:" + $0 }.joined(separator: ","),
                     "-addext", "basicConstraints=critical,CA:FALSE", "-addext", "extendedKeyUsage=serverAuth"])
        return made
    }

    private static func openssl(_ args: [String]) throws {
        let r = try Shell.run("/usr/bin/openssl", args)
        guard r.status == 0 else { throw Shell.Failure(description: "openssl \(args[0]) failed: \(r.output)") }
    }
}
