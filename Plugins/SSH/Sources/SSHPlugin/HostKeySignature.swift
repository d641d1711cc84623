import CLibSSH2
import LibSSH2
import Glibc

/// A CA's signature over a host certificate, checked by libssh2's own host key code through
/// `libssh2_termhost_signature_verify` (Termhost's host-certificates.patch, which also lets the
/// handshake take a certificate as the host key). Looked up at run time: with a libssh2 without
/// the patch, certificate host key algorithms are not offered and host keys stay plain.
enum HostKeySignature {
    private typealias Verify = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int,
                                               UnsafePointer<UInt8>?, Int) -> Int32

    private static let verify = LibSSH2.optionalFunction("libssh2_termhost_signature_verify", as: Verify.self)

    /// Whether the loaded libssh2 can check certificates.
    static var available: Bool { verify != nil }

    /// Whether `signature` (an SSH signature blob) is `key`'s valid signature of `data`; false
    /// when the library cannot tell.
    static func isValid(_ signature: [UInt8], by key: [UInt8], of data: [UInt8], session: OpaquePointer) -> Bool {
        guard let verify else { return false }
        return verify(session, key, key.count, signature, signature.count, data, data.count) == 0
    }
}
