// fuzz-sources: Registry/Sources/SSHWire.swift Registry/Sources/SSHPublicKey.swift Registry/Sources/OpenSSHPrivateKey.swift
// An OpenSSH private key (termhost plugins sign --key) from any bytes: an accepted one is
// unencrypted Ed25519 or ECDSA, and its secret has the size its public key calls for.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let texts = [String(decoding: bytes, as: UTF8.self), SSHArmor.encode(bytes, label: OpenSSHPrivateKey.armorLabel)]
    for text in texts {
        guard let key = try? OpenSSHPrivateKey(armored: text) else { continue }
        switch (key.secret, key.publicKey.kind) {
        case (.ed25519(let seed), .ed25519): precondition(seed.count == 32)
        case (.ecdsa(let scalar), .ecdsa(let curve, _)): precondition(scalar.count == curve.coordinateSize)
        default: preconditionFailure("secret does not fit the public key")
        }
    }
    return 0
}
