import Foundation
import Testing
import TestSupport

/// OpenSSH user certificates against an sshd that trusts a CA (TrustedUserCAKeys) and has no
/// authorized_keys for the user: the certificate beside the key (FILE-cert.pub) or named by
/// the host's --certificate is offered, and the server's checks (principals, validity) decide.
/// Before, a certificate outside ssh-agent was never offered: Permission denied.
/// libssh2 1.10 (the system's, .ci/run's second pass) cannot sign with a certificate: there
/// the certificate is not offered and that is said, which the last test checks.
@Suite(.timeLimit(.minutes(2))) struct UserCertificateEndToEndTests {
    static let librarySigns = LoadedLibSSH2.atLeast(1, 11, of: Paths.products + "/libSSHPlugin.so")

    static func harness(_ dir: TemporaryDirectory) throws -> (SSHHarness, ca: UserKey) {
        let ca = try UserKey(in: dir.sub("ca"), name: "user_ca", type: "ed25519")
        let h = try SSHHarness(dir: dir, authorize: false, serverConfig: "TrustedUserCAKeys \(ca.privatePath).pub\n")
        return (h, ca)
    }

    /// Signs the harness's key as ssh-keygen -s does; the certificate lands beside the key.
    static func sign(_ h: SSHHarness, ca: UserKey, principal: String, validity: String = "-5m:+1h") throws {
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-s", ca.privatePath, "-I", "termhost-test", "-n", principal,
                                                     "-V", validity, h.key.privatePath + ".pub"])
        #expect(r.status == 0, "\(r.output)")
    }

    @Test(.enabled(if: librarySigns, "needs libssh2 1.11, which signs with certificates")) func theCertificateBesideTheKeyLogsIn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, ca) = try Self.harness(dir)
        defer { h.server.stop() }
        let without = try h.termhost(["exec", h.target, "--", "true"])
        #expect(without.status == 255 && without.stderr.contains("Permission denied"), "no certificate yet: \(without.output)")
        try Self.sign(h, ca: ca, principal: NSUserName())
        let r = try h.termhost(["exec", h.target, "--", "echo", "certified"])
        #expect(r.status == 0 && r.stdout == "certified\n" && r.stderr.isEmpty, "\(r.output)\n\(h.server.log)")
    }

    @Test(.enabled(if: librarySigns, "needs libssh2 1.11, which signs with certificates")) func theServerJudgesPrincipalsAndValidity() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, ca) = try Self.harness(dir)
        defer { h.server.stop() }
        try Self.sign(h, ca: ca, principal: "someone-else")
        let principal = try h.termhost(["exec", h.target, "--", "true"])
        #expect(principal.status == 255 && principal.stderr.contains("Permission denied"), "\(principal.output)")
        // The certificate reached the server, which judged it (not merely an unknown key).
        #expect(Wait.until(timeout: 10) { h.server.log.contains("not a listed principal") }, "\(h.server.log)")
        try Self.sign(h, ca: ca, principal: NSUserName(), validity: "-2h:-1h")
        let expired = try h.termhost(["exec", h.target, "--", "true"])
        #expect(expired.status == 255 && expired.stderr.contains("Permission denied"), "\(expired.output)")
        #expect(Wait.until(timeout: 10) { h.server.log.contains("expired") }, "\(h.server.log)")
    }

    @Test(.enabled(if: librarySigns, "needs libssh2 1.11, which signs with certificates")) func aHostsCertificateFileIsOfferedAndABrokenOneIsNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, ca) = try Self.harness(dir)
        defer { h.server.stop() }
        try Self.sign(h, ca: ca, principal: NSUserName())
        let elsewhere = dir.sub("certs") + "/lab-cert.pub"
        try FileManager.default.createDirectory(atPath: dir.sub("certs"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: h.key.privatePath + "-cert.pub", toPath: elsewhere)
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath, "--certificate", elsewhere])
        #expect(add.status == 0, "\(add.output)")
        let r = try h.termhost(["exec", "lab", "--", "echo", "certified"])
        #expect(r.status == 0 && r.stdout == "certified\n", "\(r.output)")
        // With another key tried first, the certificate goes only with the key it certifies:
        // sent with the other one, the server would take it and refuse the signature.
        let other = try UserKey(in: dir.sub("keys"), name: "other", type: "ed25519")
        try h.termhost(["hosts", "edit", "lab", "--identity", other.privatePath, "--add-identity", h.key.privatePath])
        let second = try h.termhost(["exec", "lab", "--", "echo", "second key"])
        #expect(second.status == 0 && second.stdout == "second key\n" && second.stderr.isEmpty, "\(second.output)")
        try h.termhost(["hosts", "edit", "lab", "--identity", other.privatePath, "--add-identity", ""])
        let none = try h.termhost(["exec", "lab", "--", "true"])
        #expect(none.stderr.hasPrefix("Certificate \(elsewhere) certifies none of this host's keys; not offered"), "\(none.output)")
        try h.termhost(["hosts", "edit", "lab", "--identity", h.key.privatePath])
        _ = dir.write("certs/broken-cert.pub", "ssh-ed25519 AAAAnot-a-certificate\n")
        try h.termhost(["hosts", "edit", "lab", "--certificate", dir.path + "/certs/broken-cert.pub"])
        let broken = try h.termhost(["exec", "lab", "--", "true"])
        #expect(broken.status == 255, "\(broken.output)")
        #expect(broken.stderr.hasPrefix("Certificate \(dir.path)/certs/broken-cert.pub is not an OpenSSH certificate"), "\(broken.stderr)")
    }

    @Test(.enabled(if: !librarySigns, "only for a libssh2 older than 1.11")) func aLibSSH2ThatCannotSignWithACertificateSaysSoAndOffersTheKeyAlone() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, ca) = try Self.harness(dir)
        defer { h.server.stop() }
        try Self.sign(h, ca: ca, principal: NSUserName())
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255 && r.stderr.contains("Permission denied"), "\(r.output)")
        #expect(r.stderr.hasPrefix("Certificate \(h.key.privatePath)-cert.pub not offered: libssh2 1.10"), "\(r.stderr)")
        #expect(!h.server.log.contains("Accepted certificate"), "the certificate reached the server:\n\(h.server.log)")
    }
}
