// fuzz-sources: Registry/Sources/SSHWire.swift Registry/Sources/SSHPublicKey.swift Registry/Sources/AllowedSigners.swift
// An allowed signers file and a revoked keys file from any bytes (an operator's files, but the
// host reads them for every command): an accepted signer has principals, a supported key and
// line numbers in order; pattern matching ends on any pattern.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let allowed = try? AllowedSigners(text: text) {
        var previous = 0
        for signer in allowed.signers {
            precondition(!signer.principals.isEmpty, "no principals")
            precondition(signer.line > previous, "lines out of order")
            previous = signer.line
            _ = signer.refusal(namespace: "termhost-plugin-set", at: Date(timeIntervalSince1970: 1_800_000_000))
            precondition(allowed.lines(for: signer.key).allSatisfy { $0.key == signer.key })
        }
    }
    _ = try? RevokedKeys(text: text)
    let words = text.split(separator: "\n", maxSplits: 1)
    if words.count == 2 {
        _ = SSHPattern.matchesList(words[0].split(separator: ",").map(String.init), String(words[1].prefix(256)))
    }
    return 0
}
