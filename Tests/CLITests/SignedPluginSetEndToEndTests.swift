import Foundation
import Testing
import TestSupport

/// Plugin sets signed with SSH keys (SSHSIG): OpenSSH's ssh-keygen and termhost sign and verify
/// each other's signatures, and the loader refuses, with the reason, every set whose signature
/// or signer does not hold. The allowed and revoked signers files sit beside the operator policy
/// (dir/allowed_signers, dir/revoked_signers), where the host looks by default.
@Suite struct SignedPluginSetEndToEndTests {
    /// A system plugin directory holding hello-c and a plugin set that pins it.
    struct SignedSet {
        let dir: TemporaryDirectory
        var cli: CLI
        let set: String

        init() throws {
            dir = TemporaryDirectory()
            cli = CLI(dir)
            let system = dir.sub("system") + "/termhost/plugins"
            let hello = try Fixtures.helloC(in: system)
            let hash = try Shell.run("/usr/bin/sha256sum", [hello.library]).stdout.prefix(64)
            set = dir.write("system/termhost/plugins/plugin-set.json", """
            { "name": "signed-test", "version": "1", "plugins": [ { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "sha256": "\(hash)" } ] }
            """)
        }

        /// A new key pair of `type` (ed25519, ecdsa, rsa); returns the private key's path.
        func key(_ type: String, name: String = "key") throws -> String {
            let path = dir.path + "/" + name + "-" + type
            let r = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "test", "-f", path])
            #expect(r.status == 0, "\(r.output)")
            return path
        }

        func publicKey(_ key: String) throws -> String {
            try String(contentsOfFile: key + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// "SHA256:..." as ssh-keygen -l prints it.
        func fingerprint(_ key: String) throws -> String {
            String(try Shell.run("/usr/bin/ssh-keygen", ["-l", "-f", key + ".pub"]).stdout.split(separator: " ")[1])
        }

        func sshKeygenSign(_ key: String, namespace: String = "termhost-plugin-set") throws {
            try? FileManager.default.removeItem(atPath: set + ".sig")
            let r = try Shell.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-f", key, "-n", namespace, set])
            #expect(r.status == 0, "\(r.output)")
        }

        func allow(_ line: String) { _ = dir.write("allowed_signers", line + "\n") }

        /// The reason plugins list gives for hello-c, which the refused set takes down with it.
        func refusal() throws -> String {
            #expect(try cli.run("hello").status == 1)
            let list = try cli.run("plugins", "list").stdout
            return list.split(separator: "\n").first { $0.contains("org.termhost.examples.hello-c 1.0.0:") }.map(String.init) ?? list
        }
    }

    @Test(arguments: ["ed25519", "ecdsa", "rsa"])
    func aSetSignedBySSHKeygenLoadsAndDoctorShowsTheSigner(type: String) throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key(type)
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(key)))
        let hello = try s.cli.run("hello")
        #expect(hello.status == 0, "\(hello.output)")
        let doctor = try s.cli.run("doctor").stdout
        let kind = ["ed25519": "ED25519", "ecdsa": "ECDSA", "rsa": "RSA"][type]!
        #expect(doctor.contains("signed-test 1 (\(s.set), 1 plugin), signed by release@example.com (\(kind) \(try s.fingerprint(key)))"), "\(doctor)")
        let json = try JSONSerialization.jsonObject(with: Data(try s.cli.run("--json", "doctor").stdout.utf8)) as? [String: Any]
        let signer = (json?["pluginSetSigners"] as? [String: [String: String]])?[s.set]
        #expect(signer == ["principals": "release@example.com", "keyType": kind, "fingerprint": try s.fingerprint(key)])
        let verify = try s.cli.run("plugins", "verify", s.set)
        #expect(verify.stdout == "Good \"termhost-plugin-set\" signature of signed-test 1 (\(s.set)) for release@example.com with \(kind) key \(try s.fingerprint(key))\n")
    }

    @Test(arguments: ["ed25519", "ecdsa"])
    func aSetSignedByTermhostVerifiesWithSSHKeygen(type: String) throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key(type)
        let sign = try s.cli.run("plugins", "sign", "--key", key, s.set)
        #expect(sign.status == 0, "\(sign.output)")
        s.allow("release@example.com " + (try s.publicKey(key)))
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-Y", "verify", "-f", s.dir.path + "/allowed_signers", "-I", "release@example.com",
                                                      "-n", "termhost-plugin-set", "-s", s.set + ".sig"], stdin: try String(contentsOfFile: s.set, encoding: .utf8))
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.hasPrefix("Good \"termhost-plugin-set\" signature for release@example.com"), "\(r.output)")
        #expect(try s.cli.run("hello").status == 0)
    }

    @Test func anEncryptedKeyIsRefusedNamingSSHKeygen() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let path = s.dir.path + "/locked"
        _ = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "secret phrase", "-f", path])
        let r = try s.cli.run("plugins", "sign", "--key", path, s.set)
        #expect(r.status == 1)
        #expect(r.stderr == "termhost: cannot sign with \(path): the key is encrypted with a passphrase; sign with 'ssh-keygen -Y sign -f KEY -n termhost-plugin-set plugin-set.json', which asks for it\n")
    }

    @Test func aChangedByteInTheSetIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(key)))
        let text = try String(contentsOfFile: s.set, encoding: .utf8)
        try text.replacingOccurrences(of: "signed-test", with: "signed-tesT").write(toFile: s.set, atomically: false, encoding: .utf8)
        #expect(try s.refusal().contains("\(s.set): bad signature \(s.set).sig by ED25519 key \(try s.fingerprint(key)): the set is not what was signed; refused"))
    }

    @Test func aChangedByteInTheSignatureIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(key)))
        // The signature bytes end the blob: change one base64 digit of the last line.
        var lines = try String(contentsOfFile: s.set + ".sig", encoding: .utf8).split(separator: "\n").map(String.init)
        var last = Array(lines[lines.count - 2])
        last[2] = last[2] == "A" ? "B" : "A"
        lines[lines.count - 2] = String(last)
        try (lines.joined(separator: "\n") + "\n").write(toFile: s.set + ".sig", atomically: false, encoding: .utf8)
        #expect(try s.refusal().contains("bad signature \(s.set).sig by ED25519 key \(try s.fingerprint(key)): the set is not what was signed; refused"))
    }

    @Test func aSignatureForAnotherNamespaceIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key, namespace: "file")
        s.allow("release@example.com " + (try s.publicKey(key)))
        #expect(try s.refusal().contains("signature \(s.set).sig by ED25519 key \(try s.fingerprint(key)) is for namespace \"file\", not \"termhost-plugin-set\"; refused"))
    }

    @Test func anUnknownSignerIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        let other = try s.key("ed25519", name: "other")
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(other)))
        #expect(try s.refusal().contains("signer ED25519 key \(try s.fingerprint(key)) of \(s.set).sig is not in allowed signers file \(s.dir.path + "/allowed_signers"); refused"))
    }

    @Test func anExpiredSignerIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ecdsa")
        try s.sshKeygenSign(key)
        s.allow("release@example.com valid-before=\"20200101Z\" " + (try s.publicKey(key)))
        #expect(try s.refusal().contains("signer release@example.com (ECDSA key \(try s.fingerprint(key))) of \(s.set).sig is not allowed now: \(s.dir.path + "/allowed_signers") line 1 made the key valid only before 2020-01-01 00:00:00 UTC (expired); refused"))
    }

    @Test func aSignerOutsideItsNamespacesIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key)
        s.allow("release@example.com namespaces=\"git,file\" " + (try s.publicKey(key)))
        #expect(try s.refusal().contains("line 1 allows namespaces \"git,file\", not \"termhost-plugin-set\"; refused"))
    }

    @Test func aRevokedSignerIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("rsa")
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(key)))
        _ = s.dir.write("revoked_signers", "# compromised 2026-11\n" + (try s.publicKey(key)) + "\n")
        #expect(try s.refusal().contains("signer RSA key \(try s.fingerprint(key)) of \(s.set).sig is revoked in \(s.dir.path + "/revoked_signers"); refused"))
    }

    @Test func policyRequiringSignaturesRefusesAnUnsignedSet() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        #expect(try s.cli.run("hello").status == 0)
        #expect(try s.cli.run("doctor").stdout.contains("signed-test 1 (\(s.set), 1 plugin), unsigned"))
        #expect(try s.cli.run("doctor").stdout.contains("signedPluginSets  checked when signed, unsigned allowed; allowed signers \(s.dir.path)/allowed_signers (absent), revoked \(s.dir.path)/revoked_signers (absent)"))
        let policy = s.cli.policy(#"{ "requireSignedPluginSets": true }"#)
        #expect(try s.cli.run("doctor").stdout.contains("signedPluginSets  required; allowed signers"))
        #expect(try s.refusal().contains("\(s.set): not signed (no \(s.set).sig), and operator policy \(policy) requires signed plugin sets (requireSignedPluginSets); refused"))
    }

    @Test func withoutAnAllowedSignersFileASignedSetLoadsUncheckedUnlessSignaturesAreRequired() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key)
        #expect(try s.cli.run("hello").status == 0)
        #expect(try s.cli.run("doctor").stdout.contains("signed by ED25519 \(try s.fingerprint(key)) (signer not checked: no allowed signers file)"))
        let policy = s.cli.policy(#"{ "requireSignedPluginSets": true }"#)
        #expect(try s.refusal().contains("signed by ED25519 key \(try s.fingerprint(key)), but there is no allowed signers file \(s.dir.path)/allowed_signers to check it against, and operator policy \(policy) requires signed plugin sets (requireSignedPluginSets); refused"))
    }

    @Test func withSignaturesRequiredAPluginDirectoryWithoutASetIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        try FileManager.default.removeItem(atPath: s.set)
        #expect(try s.cli.run("hello").status == 0)
        let policy = s.cli.policy(#"{ "requireSignedPluginSets": true }"#)
        #expect(try s.refusal().contains("refused: the plugin set of its directory cannot be used, so nothing there can be verified (\(s.set) does not exist, and operator policy \(policy) requires signed plugin sets (requireSignedPluginSets))"))
    }

    @Test func anAllowedSignersFileOthersCanWriteIsRefused() throws {
        let s = try SignedSet()
        defer { s.dir.remove() }
        let key = try s.key("ed25519")
        try s.sshKeygenSign(key)
        s.allow("release@example.com " + (try s.publicKey(key)))
        chmod(s.dir.path + "/allowed_signers", 0o666)
        #expect(try s.refusal().contains("\(s.dir.path)/allowed_signers is writable by its group and others (mode 0666)"))
    }
}
