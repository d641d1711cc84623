import CLibSSH2

/// The host key algorithms offered in the handshake, ordered as OpenSSH's client orders them:
/// the types known_hosts already holds for the host first, then the rest.
///
/// Why: the server answers with the first algorithm of ours that it has a key for. libssh2's
/// own order starts with ECDSA, so a host whose ed25519 key OpenSSH's `ssh` had saved showed
/// its ECDSA key instead and looked unknown (asked again, or refused without a terminal).
///
/// The names come from libssh2 at run time (`libssh2_session_supported_algs`), so a newer
/// libssh2 contributes what it adds (1.11: rsa-sha2-512 and rsa-sha2-256) and a name it lacks
/// is never listed.
enum HostKeyPreference {
    /// OpenSSH's default order for the algorithms of plain (non-certificate) keys, ssh-rsa last
    /// (OpenSSH 8.8 dropped it from the default; libssh2 1.10 has nothing else for RSA keys).
    static let openSSHOrder = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                               "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]

    /// The key type (as known_hosts names it) a host key algorithm checks.
    static func keyType(of algorithm: String) -> String {
        algorithm.hasPrefix("rsa-sha2-") && !algorithm.contains("-cert-") ? "ssh-rsa" : algorithm
    }

    /// Where the certificate algorithms (`*-cert-v01@openssh.com`) go: first when a
    /// `@cert-authority` line names the host (the server then shows its certificate), last
    /// otherwise (a plain key is asked for, as before), and nowhere when the loaded libssh2
    /// cannot take a certificate as a host key (HostKeySignature.available).
    enum Certificates { case first, last, none }

    /// `supported` reordered: OpenSSH's order, then libssh2's for the names OpenSSH's list lacks
    /// (ssh-dss); every algorithm of a known key type moved to the front, each group keeping
    /// that order; the certificate algorithms OpenSSH 9.2 offers, in its order, where
    /// `certificates` says.
    static func order(knownKeyTypes: [String], supported: [String], certificates: Certificates) -> [String] {
        let isCertificate = { (name: String) in name.hasSuffix(HostCertificate.typeSuffix) }
        let plain = supported.filter { !isCertificate($0) }
        let all = openSSHOrder.filter(plain.contains) + plain.filter { !openSSHOrder.contains($0) }
        let known = Set(knownKeyTypes)
        let ordered = all.filter { known.contains(keyType(of: $0)) } + all.filter { !known.contains(keyType(of: $0)) }
        // As OpenSSH 9.2 offers them: not ssh-rsa-cert (a SHA-1 handshake signature).
        let certs = openSSHOrder.filter { $0 != "ssh-rsa" }.map { $0 + HostCertificate.typeSuffix }.filter(supported.contains)
        switch certificates {
        case .first: return certs + ordered
        case .last: return ordered + certs
        case .none: return ordered
        }
    }

    /// The names libssh2 supports for one method type (LIBSSH2_METHOD_*), in its own order.
    static func supported(_ session: OpaquePointer, _ methodType: Int32) -> [String] {
        var names: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        let count = libssh2_session_supported_algs(session, methodType, &names)
        guard count > 0, let names else { return [] }
        defer { libssh2_free(session, names) }
        return (0..<Int(count)).compactMap { names[$0].map { String(cString: $0) } }
    }

    /// Sets the order before the handshake and returns what was offered. When libssh2 refuses
    /// the list, its own default stays (and is returned): the connection is no worse than before.
    @discardableResult
    static func apply(to session: OpaquePointer, knownKeyTypes: [String], certificateAuthority: Bool) -> [String] {
        let supported = supported(session, LIBSSH2_METHOD_HOSTKEY)
        let certificates: Certificates = HostKeySignature.available ? (certificateAuthority ? .first : .last) : .none
        let offer = order(knownKeyTypes: knownKeyTypes, supported: supported, certificates: certificates)
        guard !offer.isEmpty, libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, offer.joined(separator: ",")) == 0 else {
            return supported
        }
        return offer
    }
}
