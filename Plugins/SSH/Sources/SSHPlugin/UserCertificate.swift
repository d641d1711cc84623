import CLibSSH2
import Foundation
import TermhostSDK

/// OpenSSH user certificates (PROTOCOL.certkeys): a CA's signature over a key, the principals
/// it may log in as, and a validity window. The server (its TrustedUserCAKeys) checks all of
/// it; the client offers the certificate with the key's signature, as ssh does for
/// CertificateFile or for the FILE-cert.pub beside the key, and then the key alone.
/// libssh2 1.11 signs for the *-cert-v01@openssh.com methods when given the certificate as
/// the public key file.
enum UserCertificate {
    static let typeSuffix = "-cert-v01@openssh.com"

    /// The version of the loaded libssh2 when it is older than 1.11, which cannot sign with a
    /// certificate (1.10 sends the query, the server takes it, and the signature step fails):
    /// the certificate is then not offered, and said so. Nil when it can.
    static let libraryCannotSign: String? = libssh2_version(0x010b00) == nil ? libssh2_version(0).map { String(cString: $0) } ?? "older than 1.11" : nil

    /// The plain key type a certificate type certifies: `ssh-ed25519-cert-v01@openssh.com`
    /// is `ssh-ed25519`; the RSA ones (also `rsa-sha2-256-cert-...`) are `ssh-rsa`.
    static func keyType(ofCertificateType type: String) -> String {
        let base = String(type.dropLast(typeSuffix.count))
        return base.hasPrefix("rsa-sha2-") ? "ssh-rsa" : base
    }

    /// A usable certificate for `keyFile`: `configured` (the host's --certificate, `~/`
    /// expanded) when given, else FILE-cert.pub when it exists. Its line is checked here, so
    /// libssh2's one error for "cannot read a file" means the private key only.
    enum Found { case none, certificate(path: String, blob: [UInt8]), unusable(String) }

    /// Whether `certificate` (a *-cert-v01 blob: type, nonce, then the key's own fields) is a
    /// certificate of `key` (a plain public key blob: type, then those fields).
    static func certifies(_ certificate: [UInt8], key: [UInt8]) -> Bool {
        guard let (certType, afterType) = OfferedKey.string(in: certificate[...]),
              let (_, afterNonce) = OfferedKey.string(in: afterType),
              let (keyTypeBytes, keyFields) = OfferedKey.string(in: key[...]) else { return false }
        let type = String(decoding: certType, as: UTF8.self)
        guard type.hasSuffix(typeSuffix), keyType(ofCertificateType: type) == String(decoding: keyTypeBytes, as: UTF8.self) else { return false }
        return !keyFields.isEmpty && afterNonce.starts(with: keyFields)
    }

    static func find(for keyFile: String, configured: String?, home: String) -> Found {
        let path: String
        if let configured {
            path = configured.hasPrefix("~/") ? home + configured.dropFirst() : configured
        } else {
            path = keyFile + "-cert.pub"
            guard FileManager.default.fileExists(atPath: path) else { return .none }
        }
        let shown = VisibleText.of(path)
        guard let line = try? String(contentsOfFile: path, encoding: .utf8) else {
            return .unusable("Certificate \(shown) cannot be read; offering \(VisibleText.of(keyFile)) without it")
        }
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        guard fields.count >= 2, fields[0].hasSuffix(typeSuffix), let blob = Base64.decode(fields[1]),
              OfferedKey.keyType(of: blob) == String(fields[0]) else {
            return .unusable("Certificate \(shown) is not an OpenSSH certificate (TYPE-cert-v01@openssh.com BASE64); offering \(VisibleText.of(keyFile)) without it")
        }
        return .certificate(path: path, blob: blob)
    }
}
