// fuzz-sources: Registry/Sources/SSHWire.swift Registry/Sources/SSHPublicKey.swift Registry/Sources/SSHSignature.swift
// An SSHSIG signature (plugin-set.json.sig) from any bytes, as armoured text and as a raw blob:
// an accepted one has a supported key, a non-empty namespace, sha256 or sha512, a signature
// algorithm that fits the key (never ssh-rsa's SHA-1), and writes back to the same blob.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for parsed in [try? SSHSignature(blob: bytes), try? SSHSignature(armored: String(decoding: bytes, as: UTF8.self))] {
        guard let sig = parsed else { continue }
        precondition(!sig.namespace.isEmpty, "empty namespace")
        precondition(sig.signatureAlgorithm != "ssh-rsa", "SHA-1 RSA signature accepted")
        precondition((try? SSHPublicKey(blob: sig.publicKey.blob)) == sig.publicKey, "key does not re-parse")
        precondition((try? SSHSignature(armored: sig.armored)) == sig, "armoured signature does not round-trip")
        precondition(sig.signedData(messageDigest: [1, 2, 3]).starts(with: SSHSignature.magic))
    }
    if let key = try? SSHPublicKey(blob: bytes) {
        precondition(key.blob == bytes)
        precondition((try? SSHPublicKey(line: key.line)) == key, "key line does not round-trip")
    }
    return 0
}
