import CLibSSH2
import TermhostSDK

/// OpenSSH's wording for a handshake that found no algorithm in common, instead of libssh2's
/// "Unable to exchange encryption keys" (which reads like "not an SSH server"):
///
///     Unable to negotiate with HOST port PORT: no matching host key type found. Their offer: rsa-sha2-512,rsa-sha2-256
///
/// followed by a line saying why, when the reason is this libssh2 (RSA host keys with SHA-2
/// before 1.11).
///
/// The lists are checked in OpenSSH's order (key exchange, host key, ciphers, MACs); our side
/// is what libssh2 supports, the host key list what was offered. MACs are not compared when the
/// cipher both sides would pick carries its own integrity check (AES-GCM, chacha20-poly1305).
enum NegotiationFailure {
    struct Mismatch: Equatable {
        /// OpenSSH's name for the list: "host key type", "cipher", ...
        let what: String
        let theirOffer: [String]
    }

    /// The first list with nothing in common, or nil when every list has a match (the
    /// handshake failed for another reason).
    static func mismatch(server: ServerKexInit, keyExchange: [String], hostKeys: [String], ciphers: [String],
                         macs: [String]) -> Mismatch? {
        let lists: [(String, [String], [String])] = [
            ("key exchange method", keyExchange, server.keyExchange),
            ("host key type", hostKeys, server.hostKey),
            ("cipher", ciphers, server.ciphersClientToServer),
            ("cipher", ciphers, server.ciphersServerToClient),
        ]
        for (what, ours, theirs) in lists where !ours.contains(where: theirs.contains) {
            return Mismatch(what: what, theirOffer: theirs)
        }
        for (ours, theirs) in [(server.ciphersClientToServer, server.macsClientToServer), (server.ciphersServerToClient, server.macsServerToClient)] {
            let chosen = ciphers.first(where: ours.contains) ?? ""
            if !carriesIntegrity(chosen) && !macs.contains(where: theirs.contains) { return Mismatch(what: "MAC", theirOffer: theirs) }
        }
        return nil
    }

    static func carriesIntegrity(_ cipher: String) -> Bool { cipher.contains("-gcm@") || cipher.hasPrefix("chacha20-poly1305") }

    /// The RSA host key algorithms that need SHA-2 signatures (libssh2 1.11 and later).
    static let rsaSHA2 = ["rsa-sha2-512", "rsa-sha2-256"]

    /// The message, with the reason when it is this libssh2's lack of RSA SHA-2.
    static func message(_ m: Mismatch, host: String, port: Int, hostKeys: [String], libssh2Version: String) -> String {
        var text = "Unable to negotiate with \(VisibleText.of(host)) port \(port): no matching \(m.what) found. " +
            "Their offer: \(VisibleText.of(m.theirOffer.joined(separator: ",")))"
        let rsaOnly = !m.theirOffer.isEmpty && m.theirOffer.allSatisfy { $0 == "ssh-rsa" || rsaSHA2.contains($0) }
        if m.what == "host key type", rsaOnly, !hostKeys.contains(where: rsaSHA2.contains) {
            text += "\nThe server offers only an RSA host key signed with SHA-2 (rsa-sha2-512, rsa-sha2-256), which libssh2 " +
                "\(VisibleText.of(libssh2Version)) cannot verify (it checks RSA host keys only as ssh-rsa, SHA-1); " +
                "termhost needs libssh2 1.11 or later for this server."
        }
        return text
    }

    /// Reads the server's offer from the bytes kept during the handshake; nil when they are not
    /// a KEXINIT or every list has a match (libssh2's own message then stays).
    static func explain(_ captured: [UInt8], session: OpaquePointer, hostKeys: [String], host: String, port: Int) -> String? {
        guard let server = ServerKexInit.parse(captured) else { return nil }
        let supported = { (method: Int32) in HostKeyPreference.supported(session, method) }
        guard let m = mismatch(server: server, keyExchange: supported(LIBSSH2_METHOD_KEX), hostKeys: hostKeys,
                               ciphers: supported(LIBSSH2_METHOD_CRYPT_CS), macs: supported(LIBSSH2_METHOD_MAC_CS)) else { return nil }
        let version = libssh2_version(0).map { String(cString: $0) } ?? "unknown"
        return message(m, host: host, port: port, hostKeys: hostKeys, libssh2Version: version)
    }
}
