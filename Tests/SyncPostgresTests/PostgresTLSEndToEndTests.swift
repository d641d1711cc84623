import Foundation
import Testing
import TestSupport

/// The Sync plugin on the real binary against a real PostgreSQL server over TCP with TLS only:
/// the server's certificate names `localhost` and is signed by a private CA; pg_hba.conf lets
/// SCRAM logins in over TLS and nothing else. Each device is separate `termhost` processes
/// with its own HOME (no ~/.postgresql/root.crt), set up through the command line only.
final class PostgresTLSEndToEndTests {
    let dir = TemporaryDirectory("termhost-pg-tls")
    let server: PostgresServer
    let authority: TestCertificates.Issued
    let stranger: TestCertificates.Issued
    var plugins: String { dir.path + "/plugins" }
    var port: Int { server.tcpPort ?? 0 }
    static let password = "Alice-Tls-Pw-1"

    init() throws {
        let certificates = dir.sub("certificates")
        authority = try TestCertificates.authority("Termhost Test CA", file: "ca", in: certificates)
        stranger = try TestCertificates.authority("Another CA", file: "other-ca", in: certificates)
        let issued = try TestCertificates.server(["localhost"], signedBy: authority, file: "server", in: certificates)
        server = try PostgresServer(in: dir, tls: .init(certificate: issued.certificate, key: issued.key))
        try server.createRole("alice", password: PostgresTLSEndToEndTests.password)
        try server.psql("CREATE DATABASE termhost OWNER alice")
        try TermhostDevice.syncPlugins(in: dir.sub("plugins"))
    }

    deinit {
        server.stop()
        dir.remove()
    }

    /// A device whose backend is set with `settings` (key=value) and `password` on stdin.
    func device(_ settings: [String], password: String = PostgresTLSEndToEndTests.password) throws -> TermhostDevice {
        let d = TermhostDevice(plugins: plugins)
        try d.setPostgresBackend(["dbname=termhost", "user=alice", "vault=team"] + settings, password: password)
        return d
    }

    /// The server's log lines for alice's sessions that got past authentication.
    var aliceSessions: [Substring] {
        server.log.split(separator: "\n").filter { $0.contains("connection authorized: user=alice ") }
    }

    @Test func aSyncOverTLSWithThePrivateCAWorksAndTheSessionUsedTLS() throws {
        let a = try device(["host=localhost", "port=\(port)", "sslrootcert=\(authority.certificate)"])
        try a.run("hosts", "add", "web", "web.example.com")
        let synced = try a.run("sync", "now")
        #expect(synced.status == 0, "\(synced.output)")
        #expect(synced.stdout == "synced with postgresql alice@localhost:\(port)/termhost vault 'team' (TLS verify-full)\n")
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 0"))
        #expect(!aliceSessions.isEmpty, "\(server.log)")
        for line in aliceSessions { #expect(line.contains(" SSL enabled (protocol=TLSv1."), "\(line)") }
        #expect(try server.psql("SELECT count(*) FROM termhost_sync.records WHERE key = 'web'", database: "termhost") == "1\n")
    }

    @Test func aClientThatDropsTLSCannotLogIn() throws {
        let a = try device(["host=localhost", "port=\(port)", "sslmode=disable"])
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("(TLS disable): no pg_hba.conf entry for host \"127.0.0.1\", user \"alice\", database \"termhost\", "
                + "no encryption; the server takes this role only over TLS: leave sslmode at verify-full and set sslrootcert"), "\(refused.stderr)")
        #expect(aliceSessions.isEmpty)
    }

    @Test func withoutARootCertificateVerifyFullRefusesAndNamesTheSetting() throws {
        let a = try device(["host=localhost", "port=\(port)"])
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        let home = a.env["HOME"]!
        #expect(refused.stderr.hasPrefix("termhost sync: postgresql alice@localhost:\(port)/termhost vault 'team' (TLS verify-full): "
                + "no CA certificate to check the server's TLS certificate with (sslmode=verify-full): set sslrootcert to the file "
                + "of the CA that signed it ('termhost sync backend set postgres ... sslrootcert=/path/ca.pem'), or put it at "
                + "\(home)/.postgresql/root.crt;"), "\(refused.stderr)")
        #expect(aliceSessions.isEmpty)
    }

    @Test func aCAThatDidNotSignTheServersCertificateIsRefused() throws {
        let a = try device(["host=localhost", "port=\(port)", "sslrootcert=\(stranger.certificate)"])
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("(TLS verify-full): the server's TLS certificate does not verify against the CA in "
                + "sslrootcert (\(stranger.certificate)): signed by another CA, or expired; set sslrootcert to the CA that "
                + "signed the server's certificate (ask the database's administrator);"), "\(refused.stderr)")
        #expect(aliceSessions.isEmpty)
    }

    @Test func anAddressTheCertificateDoesNotNameIsRefused() throws {
        let a = try device(["host=127.0.0.1", "port=\(port)", "sslrootcert=\(authority.certificate)"])
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("(TLS verify-full): the server's TLS certificate is for \"localhost\" (and 1 other name), "
                + "not for host \"127.0.0.1\" (sslmode=verify-full checks the name); set host to a name the certificate carries;"),
                "\(refused.stderr)")
        #expect(aliceSessions.isEmpty)
    }

    @Test func aWrongPasswordIsRefusedAndShownNowhere() throws {
        let wrong = "Wrong-Secret-4711"
        let a = try device(["host=localhost", "port=\(port)", "sslrootcert=\(authority.certificate)"], password: wrong)
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("(TLS verify-full): password authentication failed for user \"alice\"; "
                + "save the role's password again with 'termhost sync backend set postgres ... --password-stdin'"), "\(refused.stderr)")
        // The remedy is the backend's alone: nothing sends a user with a wrong password to the vault's owner.
        #expect(!refused.stderr.contains("owner"), "\(refused.stderr)")
        let outputs = [refused.output, try a.run("sync", "status").output, try a.run("sync", "status", "--json").output,
                       try a.run("sync", "backend", "show", "--json").output, server.log]
        for text in outputs { #expect(!text.contains(wrong), "\(text)") }
        #expect(try a.run("sync", "status", "--json").stdout.contains("password authentication failed"))
    }
}
