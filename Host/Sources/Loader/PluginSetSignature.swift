import Foundation
import Glibc
import TermhostRegistry
import TermhostSDK

/// Design: a plugin set may carry an SSHSIG signature beside it (`plugin-set.json.sig`, what
/// `ssh-keygen -Y sign -n termhost-plugin-set plugin-set.json` writes). It is checked on the
/// bytes of plugin-set.json that the catalog then decodes and pins by (one read, no second one
/// between check and use), in this order, OpenSSH's: the signature parses and is for the
/// namespace "termhost-plugin-set"; it verifies with the key it carries; that key is not in the
/// revoked signers file; and a line of the allowed signers file names the key (any principal of
/// the line: a plugin set has no identity to match, so the line's principals are reported),
/// allows the namespace and is valid now (valid-after, valid-before).
///
/// Outcomes: a set without a signature loads, unless operator policy requires signed sets. A
/// signature that fails any check refuses the set, required or not: someone signed it, and
/// what arrived is not what they signed or not from whom the operator trusts. The one lenient
/// case: with no allowed signers file at all and no requirement, a valid signature is accepted
/// and shown as "signer not checked", since the set would load unsigned anyway.
public struct PluginSetTrust: Sendable {
    /// `requireSignedPluginSets` of the operator policy.
    public var required: Bool
    public var allowedSigners: String
    public var revokedSigners: String
    /// Who requires signatures, for messages: "operator policy P requires signed plugin sets
    /// (requireSignedPluginSets)".
    public var requirement: String
    public var now: Date

    public init(required: Bool, allowedSigners: String, revokedSigners: String, requirement: String, now: Date = Date()) {
        self.required = required
        self.allowedSigners = allowedSigners
        self.revokedSigners = revokedSigners
        self.requirement = requirement
        self.now = now
    }

    /// No policy: unsigned sets load, and signed ones are checked against /etc/termhost.
    public static let standard = PluginSetTrust(required: false, allowedSigners: "/etc/termhost/allowed_signers",
                                                revokedSigners: "/etc/termhost/revoked_signers", requirement: "")
}

/// Who signed a plugin set, as `termhost doctor` shows it.
public struct PluginSetSigner: Sendable, Equatable, Encodable {
    /// The principals field of the allowed signers line; nil when there was no file to check.
    public let principals: String?
    /// "ED25519", "ECDSA", "RSA".
    public let keyType: String
    /// "SHA256:...", as ssh-keygen -l prints it.
    public let fingerprint: String

    /// "release@example.com (ED25519 SHA256:...)", or without a file to check against
    /// "ED25519 SHA256:... (signer not checked: no allowed signers file)".
    public var description: String {
        guard let principals else { return "\(keyType) \(fingerprint) (signer not checked: no allowed signers file)" }
        return "\(principals) (\(keyType) \(fingerprint))"
    }
}

public enum PluginSetSignature {
    /// The signer of the set whose bytes are `setBytes`, nil when it is unsigned and that is
    /// allowed; throws the reason the set is refused, naming the set, the signature and the key.
    public static func check(setBytes: [UInt8], setPath: String, trust: PluginSetTrust) throws(RegistryError) -> PluginSetSigner? {
        let sigPath = setPath + ".sig"
        func refused(_ detail: String) -> RegistryError { .invalidDocument(file: setPath, field: "", detail: detail + "; refused") }
        // The signature's own integrity is what is checked, so who may write it does not matter.
        guard let signature = try readFile(sigPath, cap: SSHSignature.maxArmoredBytes, checkSafe: false, refused, SSHSignature.init(armored:)) else {
            guard !trust.required else {
                throw refused("not signed (no \(sigPath)), and \(trust.requirement)")
            }
            return nil
        }
        let key = signature.publicKey
        let keyText = "\(key.displayType) key \(SSHSignatureCrypto.fingerprint(key))"
        guard signature.namespace == SSHSignatureCrypto.pluginSetNamespace else {
            throw refused("signature \(sigPath) by \(keyText) is for namespace \"\(VisibleText.of(signature.namespace))\", not \"\(SSHSignatureCrypto.pluginSetNamespace)\"")
        }
        guard SSHSignatureCrypto.isValid(signature, message: setBytes) else {
            throw refused("bad signature \(sigPath) by \(keyText): the set is not what was signed")
        }
        if let revoked = try readFile(trust.revokedSigners, cap: AllowedSigners.maxBytes, checkSafe: true, refused, RevokedKeys.init(text:)), revoked.keys.contains(key) {
            throw refused("signer \(keyText) of \(sigPath) is revoked in \(trust.revokedSigners)")
        }
        guard let allowed = try readFile(trust.allowedSigners, cap: AllowedSigners.maxBytes, checkSafe: true, refused, AllowedSigners.init(text:)) else {
            guard !trust.required else {
                throw refused("signed by \(keyText), but there is no allowed signers file \(trust.allowedSigners) to check it against, and \(trust.requirement)")
            }
            return PluginSetSigner(principals: nil, keyType: key.displayType, fingerprint: SSHSignatureCrypto.fingerprint(key))
        }
        let lines = allowed.lines(for: key)
        guard !lines.isEmpty else { throw refused("signer \(keyText) of \(sigPath) is not in allowed signers file \(trust.allowedSigners)") }
        guard let line = lines.first(where: { $0.refusal(namespace: signature.namespace, at: trust.now) == nil }) else {
            throw refused("signer \(lines[0].principals) (\(keyText)) of \(sigPath) is not allowed now: \(trust.allowedSigners) \(lines[0].refusal(namespace: signature.namespace, at: trust.now)!)")
        }
        return PluginSetSigner(principals: line.principals, keyType: key.displayType, fingerprint: SSHSignatureCrypto.fingerprint(key))
    }

    /// The parsed file, nil when it does not exist; any other problem refuses (fail closed).
    /// checkSafe: whoever could write the file would choose what is trusted (the allowed and
    /// revoked signers), so it is held to the plugin set's rule (SafePath).
    static func readFile<T>(_ path: String, cap: Int, checkSafe: Bool, _ refused: (String) -> RegistryError,
                               _ parse: (String) throws(SSHFormatError) -> T) throws(RegistryError) -> T? {
        guard !path.isEmpty else { return nil }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw refused("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let bytes: Data
        do { bytes = try BoundedFile.read(fd: fd, file: path, cap: cap) } catch { throw refused(error.description) }
        if checkSafe, let unsafe = SafePath.problem(fd: fd, path: path) { throw refused(unsafe) }
        do { return try parse(String(decoding: bytes, as: UTF8.self)) } catch { throw refused("\(path): \(error.detail)") }
    }
}
