import Foundation

/// An OpenSSH `ed25519-sk` private key file written without an authenticator: the format
/// (PROTOCOL.key, PROTOCOL.u2f) holds only the public key, the application, flags and the
/// authenticator's key handle, none of which needs the device to exist. ssh-keygen reads it
/// (its fingerprint, its public key); signing with it would need the device, which is the point:
/// a client must say it cannot use it rather than skip it silently.
public enum SecurityKeyFile {
    /// Writes the key to `path` (mode 0600) and its `.pub` beside it; returns the public line.
    @discardableResult
    public static func writeEd25519(to path: String, comment: String = "test-sk") throws -> String {
        let type = Array("sk-ssh-ed25519@openssh.com".utf8)
        let publicKey = (0..<32).map { UInt8($0 * 7 & 0xff) }
        let application = Array("ssh:".utf8)
        let publicBlob = string(type) + string(publicKey) + string(application)
        var secret = [UInt8](repeating: 0x5a, count: 4) + [UInt8](repeating: 0x5a, count: 4)   // the two check words
        secret += string(type) + string(publicKey) + string(application)
        secret += [0x01]                                               // flags: user presence required
        secret += string([UInt8](repeating: 0xab, count: 64))         // the key handle
        secret += string([]) + string(Array(comment.utf8))             // reserved, comment
        var pad: UInt8 = 1
        while secret.count % 8 != 0 { secret.append(pad); pad += 1 }
        let body = Array("openssh-key-v1\0".utf8) + string(Array("none".utf8)) + string(Array("none".utf8)) + string([])
            + [0, 0, 0, 1] + string(publicBlob) + string(secret)
        let base64 = Data(body).base64EncodedString()
        let lines = stride(from: 0, to: base64.count, by: 70).map { start -> String in
            let from = base64.index(base64.startIndex, offsetBy: start)
            return String(base64[from..<(base64.index(from, offsetBy: 70, limitedBy: base64.endIndex) ?? base64.endIndex)])
        }
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + lines.joined(separator: "\n") + "\n-----END OPENSSH PRIVATE KEY-----\n"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600])
        let line = "sk-ssh-ed25519@openssh.com \(Data(publicBlob).base64EncodedString()) \(comment)"
        try (line + "\n").write(toFile: path + ".pub", atomically: true, encoding: .utf8)
        return line
    }

    private static func string(_ bytes: [UInt8]) -> [UInt8] {
        let n = UInt32(bytes.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }
}
