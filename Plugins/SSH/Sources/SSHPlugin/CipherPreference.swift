import CLibSSH2
import Foundation

/// The cipher offered first, in both directions: AES-GCM on libssh2 1.11 when the CPU has AES
/// and carry-less multiply instructions, libssh2's own order (chacha20-poly1305 first, as
/// OpenSSH's) otherwise.
///
/// Why: libssh2's chacha20-poly1305 is portable C, while AES-GCM runs in OpenSSL's AES-NI and
/// PCLMULQDQ code; with whole runs of blocks per cipher call (Termhost's libssh2 build, see
/// Docs/SSH.md) an SFTP transfer costs the client about a fifth of the instructions per MiB
/// with aes128-gcm@openssh.com. aes128 before aes256, as in OpenSSH's list: 10 rounds against 14.
/// Without the instructions AES-GCM falls back to table-driven code (why OpenSSH puts
/// chacha20-poly1305 first), so the order is left alone.
enum CipherPreference {
    static let preferred = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]

    /// `supported` with the preferred names that it holds moved to the front, in that order.
    static func order(supported: [String]) -> [String] {
        preferred.filter(supported.contains) + supported.filter { !preferred.contains($0) }
    }

    /// Whether the CPU offers AES and carry-less multiply instructions (x86: aes and pclmulqdq,
    /// arm64: aes and pmull), from the kernel's feature list.
    static let hardwareAESGCM: Bool = {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
        for line in info.split(separator: "\n") where line.hasPrefix("flags") || line.hasPrefix("Features") {
            let flags = Set(line.split(separator: " "))
            return flags.contains("aes") && (flags.contains("pclmulqdq") || flags.contains("pmull"))
        }
        return false
    }()

    /// Sets the order before the handshake. On libssh2 1.10 (no AES-GCM) or without the
    /// instructions, libssh2's own order stays; so does it when libssh2 refuses the list.
    static func apply(to session: OpaquePointer) {
        guard libssh2_version(0x010B00) != nil, hardwareAESGCM else { return }
        for method in [LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC] {
            let offer = order(supported: HostKeyPreference.supported(session, method))
            guard !offer.isEmpty else { continue }
            _ = libssh2_session_method_pref(session, method, offer.joined(separator: ","))
        }
    }
}
