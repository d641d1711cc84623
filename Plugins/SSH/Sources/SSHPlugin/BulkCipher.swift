import BatchedCTR
import CLibSSH2
import TermhostSDK

/// The bulk AES-CTR keystream (BatchedCTR) for libssh2's sessions: on by default with libssh2
/// 1.10, off by default with 1.11; the operator's setting `org.termhost.ssh` `bulkCipher`
/// (`true` or `false`) decides either way. Off, or refused by OpenSSL, libssh2 uses OpenSSL's
/// own AES-CTR: never less correct, and the log says why.
///
/// Why not on 1.11: Termhost's libssh2 1.11.1 hands the cipher whole runs of blocks, where
/// OpenSSL's own AES-CTR costs fewer instructions per MiB than the keystream's copy and XOR
/// (Docs/SSH.md), and Termhost prefers AES-GCM there, which the keystream does not cover. An
/// unpatched system 1.11 reports the same version and gets the same default (Docs/SSH.md says
/// what that costs).
///
/// It lives in an OpenSSL library context of its own, which a thread uses only inside
/// `during`: the handshake and the connection's executor run libssh2 there, so the cipher
/// contexts made at each key exchange come from it, and no other OpenSSL user in the process
/// (another plugin, the host, or this plugin outside `during`) sees it.
enum BulkCipher {
    static func enable(_ host: PluginHost) {
        let setting = (try? host.setting(feature: "org.termhost.ssh", key: "bulkCipher")) ?? nil
        if let setting, setting == "false" || setting == "0" {
            host.log(.info, "bulk AES-CTR keystream off (setting bulkCipher)")
            return
        }
        if setting == nil, libssh2_version(0x010B00) != nil {
            host.log(.info, "bulk AES-CTR keystream off by default on libssh2 \(SSHConnection.libssh2Version) (setting bulkCipher true turns it on)")
            return
        }
        var why = [UInt8](repeating: 0, count: 256)
        let on = why.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { termhost_batched_ctr_enable($0, b.count) }
        }
        if on == 1 {
            host.log(.debug, "bulk AES-CTR keystream on (OpenSSL provider 'termhost', in the SSH sessions' library context)")
        } else {
            host.log(.warning, "bulk AES-CTR keystream off: \(String(decoding: why.prefix { $0 != 0 }, as: UTF8.self)); bulk transfers use more CPU")
        }
    }

    /// Runs body with the SSH sessions' OpenSSL library context as this thread's default.
    /// Wrap libssh2 calls that may run a key exchange (the handshake, and any read or write:
    /// the server may start a re-key at any time). Nests.
    static func during<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = termhost_batched_ctr_enter()
        defer { termhost_batched_ctr_leave(previous) }
        return try body()
    }
}
