import Foundation
import Testing
import TestSupport

/// sshd's MaxAuthTries counts every key offered. When the keys tried before the right one use
/// the tries up, sshd disconnects: Termhost says so as OpenSSH does, names the keys that were
/// tried, and a host with its own key offers only that key (OpenSSH's IdentitiesOnly).
@Suite struct MaxAuthTriesEndToEndTests {
    /// ~/.ssh holds id_ed25519 and id_ecdsa, which the server does not know, and id_rsa, which it
    /// accepts (also as ssh-rsa, which is all libssh2 1.10 signs with): tried in that order, the
    /// accepted key comes third, after sshd's two tries.
    static func harness(_ dir: TemporaryDirectory) throws -> (SSHHarness, ed25519: UserKey, ecdsa: UserKey) {
        let h = try SSHHarness(dir: dir, keyType: "rsa", serverConfig: "MaxAuthTries 2\nPubkeyAcceptedAlgorithms +ssh-rsa\n")
        let ed25519 = try UserKey(in: h.home + "/.ssh", name: "id_ed25519", type: "ed25519")
        let ecdsa = try UserKey(in: h.home + "/.ssh", name: "id_ecdsa", type: "ecdsa")
        return (h, ed25519, ecdsa)
    }

    /// `SHA256:...` as ssh-keygen prints it.
    static func fingerprint(_ key: UserKey) throws -> String {
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", key.privatePath + ".pub"])
        return r.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "(ssh-keygen: \(r.output))"
    }

    static let remedy = "The server counts each key offered as a failed try. Choose the key for this host: " +
        "termhost hosts add|edit NAME ... --identity FILE (or --use-identity with an identity's --key); " +
        "a host with its own key is offered only that key, as OpenSSH's IdentitiesOnly does."

    @Test func tooManyKeysSaysWhatTheServerSaidAndWhichKeysWereTried() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (h, ed25519, ecdsa) = try Self.harness(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == """
            Received disconnect from 127.0.0.1 port \(h.server.port):2: Too many authentication failures
            Authentication tried: \(h.home)/.ssh/id_ed25519 ED25519 \(try Self.fingerprint(ed25519)), \
            \(h.home)/.ssh/id_ecdsa ECDSA \(try Self.fingerprint(ecdsa))
            \(Self.remedy)

            """, "\(r.stderr)")
        #expect(!r.stderr.contains("RSA key was refused"), "the RSA key was never offered")
    }

    @Test func aHostWithItsOwnKeyOffersOnlyThatKeyNotTheAgents() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (server, ed25519, ecdsa) = try Self.harness(dir)
        var h = server
        defer { h.server.stop() }
        let socket = dir.path + "/agent.sock"
        let agent = Shell.spawnBackground("/usr/bin/ssh-agent", ["-D", "-a", socket])
        defer { Shell.stopBackground(agent) }
        #expect(Wait.until { FileManager.default.fileExists(atPath: socket) }, "ssh-agent never made its socket")
        for key in [ed25519, ecdsa] {
            let add = try Shell.run("/usr/bin/ssh-add", [key.privatePath], environment: ["SSH_AUTH_SOCK": socket])
            #expect(add.status == 0, "\(add.output)")
        }
        h.extraEnvironment["SSH_AUTH_SOCK"] = socket

        let adHoc = try h.termhost(["exec", h.target, "--", "true"])
        #expect(adHoc.status == 255)
        #expect(adHoc.stderr.contains("""
            Authentication tried: agent key 'test-id_ed25519' ED25519 \(try Self.fingerprint(ed25519)), \
            agent key 'test-id_ecdsa' ECDSA \(try Self.fingerprint(ecdsa))

            """), "\(adHoc.stderr)")

        let port = String(h.server.port)
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", port, "--user", NSUserName(), "--identity", h.key.privatePath])
        let lab = try h.termhost(["exec", "lab", "--", "echo", "own key"])
        #expect(lab.status == 0 && lab.stdout == "own key\n", "\(lab.output)")

        try h.termhost(["identities", "add", "ops", "--user", NSUserName(), "--key", h.key.privatePath])
        try h.termhost(["hosts", "add", "ops-lab", "127.0.0.1", "--port", port, "--use-identity", "ops"])
        let ops = try h.termhost(["exec", "ops-lab", "--", "echo", "identity key"])
        #expect(ops.status == 0 && ops.stdout == "identity key\n", "\(ops.output)")
    }
}
