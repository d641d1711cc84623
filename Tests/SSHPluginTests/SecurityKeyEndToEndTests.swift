import Foundation
import Testing
import TestSupport

/// A FIDO security-key key (`ed25519-sk`) cannot sign without its authenticator, which termhost
/// has no support for. It is never skipped without a word: the line names the key, its type and
/// fingerprint and why, before the login goes on with the next key (or fails), as OpenSSH names
/// a key it cannot use. Before, libssh2 failed on such a file silently and ~/.ssh/id_ed25519_sk
/// was not even looked at.
@Suite(.timeLimit(.minutes(2))) struct SecurityKeyEndToEndTests {
    /// The server accepts id_ecdsa, which comes after id_ed25519_sk in the default order.
    static func harness(_ dir: TemporaryDirectory) throws -> (SSHHarness, skPath: String, notice: String) {
        let h = try SSHHarness(dir: dir, keyType: "ecdsa")
        let skPath = h.home + "/.ssh/id_ed25519_sk"
        let line = try SecurityKeyFile.writeEd25519(to: skPath)
        // The file is a real OpenSSH key: ssh-keygen reads its public half from the private file.
        let derived = try Shell.run("/usr/bin/ssh-keygen", ["-y", "-f", skPath])
        #expect(derived.status == 0 && line.hasPrefix(derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(derived.output)")
        let listed = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", skPath + ".pub"])
        #expect(listed.stdout.hasSuffix("(ED25519-SK)\n"), "\(listed.output)")
        let fingerprint = listed.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
        let notice = "Skipping key \(skPath) (ED25519-SK \(fingerprint)): it is a FIDO security key (sk-ssh-ed25519@openssh.com), "
            + "which termhost cannot use; give this host a key without a security key (termhost hosts edit NAME --identity FILE)\n"
        return (h, skPath, notice)
    }

    @Test func aDefaultSecurityKeyIsNamedAndTheNextKeyLogsIn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, _, notice) = try Self.harness(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo", "in"])
        #expect(r.status == 0 && r.stdout == "in\n", "\(r.output)")
        #expect(r.stderr == notice, "\(r.stderr)")
        // -q quiets it, as ssh -q quiets its warnings.
        let quiet = try h.termhost(["exec", "-q", h.target, "--", "echo", "in"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.output)")
    }

    @Test func aHostWhoseKeyIsASecurityKeySaysSoBeforeThePermissionDenied() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, skPath, notice) = try Self.harness(dir)
        defer { h.server.stop() }
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(), "--identity", skPath])
        #expect(add.status == 0, "\(add.output)")
        let r = try h.termhost(["ssh", "lab", "true"])
        #expect(r.status == 255, "\(r.output)")
        #expect(r.stderr.hasPrefix(notice), "\(r.stderr)")
        #expect(r.stderr.contains("Permission denied (publickey"), "\(r.stderr)")
    }
}
