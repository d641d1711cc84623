import Foundation
import Testing
@testable import TermhostRegistry

/// The SSH formats behind signed plugin sets, on inputs ssh-keygen would not write: the
/// cryptography and the files ssh-keygen does write are tested end to end (SignedPluginSetEndToEndTests).
@Suite struct SSHSignatureFormatTests {
    static let rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC/EaAS2o1eezYITA/Rm0gcZ1T6CmzEeCgDISgbUW2inOYGqP8EHHLCEcbzS34+74hGNZSeQKd4ekCwCQVBxxoQijIMg5CJrKzg8acQ+sAyHuAg50NDIeyGZAqMPURZFIQPvhJ+UxR1vGn75sEj4JxShvqysJJp0W08JwYfItuYEM/v3DeMlW/5rhYJXcD2Um6dWLBUB82nkT1may6Gh7GvpG/0BJv8S6RQpCjotX4ux3M6mShWV0+cuhdKenHdE9qnzA+kGG66VJC/qainizgbpeq3ZiL4VSMufCqaaiJ4r4TDzfUFAX6dssYb31SfLcFESHptIto1efsBEA7VpvagedkKb1+95i6tehKBc8wC0j/J5aKCSoXCdMEIy7nEwrl1F7QS9xlYFODWuyFIV99VHSgYisONSAzf0ol3xMotcT2vXM/Zr3NMl/g7hM0drEBUL1txoziSLxl1sm86pq7UoShhSjPMaPYRSRahLIBKEToDp9bRnrWhVHAYuCfairU="
    static let ed25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILOu7f5XM6o5Wqyb+Y6fyv5iy+UMgvtjU9HB2yb/XysQ"

    func signature(key: SSHPublicKey, algorithm: String, bytes: [UInt8], hash: String = "sha512") -> [UInt8] {
        var sig = SSHWireWriter()
        sig.string(algorithm)
        sig.string(bytes)
        var w = SSHWireWriter()
        w.uint32(1)
        w.string(key.blob)
        w.string("termhost-plugin-set")
        w.string([UInt8]())
        w.string(hash)
        w.string(sig.bytes)
        return SSHSignature.magic + w.bytes
    }

    @Test func anRSASignatureWithSHA1IsRefused() throws {
        let key = try SSHPublicKey(line: Self.rsa)
        let blob = signature(key: key, algorithm: "ssh-rsa", bytes: [UInt8](repeating: 1, count: 384))
        #expect(throws: SSHFormatError("RSA signature with SHA-1 (ssh-rsa) refused; sign with rsa-sha2-512 (ssh-keygen -Y sign does by default)")) {
            try SSHSignature(blob: blob)
        }
        #expect(try SSHSignature(blob: signature(key: key, algorithm: "rsa-sha2-512", bytes: [UInt8](repeating: 1, count: 384))).signatureAlgorithm == "rsa-sha2-512")
    }

    @Test func aHashOtherThanSHA256OrSHA512IsRefused() throws {
        let key = try SSHPublicKey(line: Self.ed25519)
        #expect(throws: SSHFormatError("hash algorithm 'sha1'; only sha256 and sha512 are allowed")) {
            try SSHSignature(blob: signature(key: key, algorithm: "ssh-ed25519", bytes: [UInt8](repeating: 0, count: 64), hash: "sha1"))
        }
    }

    @Test func aSignatureRoundTripsThroughItsArmour() throws {
        let key = try SSHPublicKey(line: Self.ed25519)
        let sig = try SSHSignature(blob: signature(key: key, algorithm: "ssh-ed25519", bytes: [UInt8](repeating: 7, count: 64)))
        #expect(sig.armored.hasPrefix("-----BEGIN SSH SIGNATURE-----\n"))
        #expect(try SSHSignature(armored: sig.armored) == sig)
    }

    @Test func allowedSignersReadsQuotedPrincipalsAndOptions() throws {
        let file = try AllowedSigners(text: """
        # release keys
        "release team,ops@example.com" cert-authority \(Self.rsa) ca
        release@example.com namespaces="termhost-plugin-set,!git",valid-after="20260101Z",valid-before="20270101120000Z" \(Self.ed25519) laptop

        """)
        #expect(file.signers.count == 2)
        #expect(file.signers[0].principals == "release team,ops@example.com")
        #expect(file.signers[0].certificateAuthority)
        let key = try SSHPublicKey(line: Self.ed25519)
        let line = try #require(file.lines(for: key).first)
        #expect(line.line == 3)
        #expect(line.namespaces == ["termhost-plugin-set", "!git"])
        #expect(line.refusal(namespace: "termhost-plugin-set", at: Date(timeIntervalSince1970: 1_790_000_000)) == nil)
        #expect(line.refusal(namespace: "git", at: Date(timeIntervalSince1970: 1_790_000_000)) == "line 3 allows namespaces \"termhost-plugin-set,!git\", not \"git\"")
        #expect(line.refusal(namespace: "termhost-plugin-set", at: Date(timeIntervalSince1970: 1_700_000_000)) == "line 3 makes the key valid only after 2026-01-01 00:00:00 UTC")
        // A cert-authority line never vouches for the plain key.
        #expect(file.lines(for: try SSHPublicKey(line: Self.rsa)).isEmpty)
    }

    @Test func aMalformedAllowedSignersLineMakesTheFileUnusableNamingTheLine() {
        #expect(throws: SSHFormatError("line 2: unsupported option 'verify-required'")) {
            try AllowedSigners(text: "a@example.com \(Self.ed25519)\nb@example.com verify-required \(Self.ed25519)\n")
        }
        #expect(throws: SSHFormatError("line 1: valid-before=\"20261399\": not a valid date")) {
            try AllowedSigners(text: "a@example.com valid-before=\"20261399\" \(Self.ed25519)\n")
        }
    }

    @Test func aBinaryKRLIsRefusedNotIgnored() {
        #expect(throws: SSHFormatError("a binary KRL; list the revoked public keys one per line instead")) {
            try RevokedKeys(text: "SSHKRL\n\0\0")
        }
    }
}
