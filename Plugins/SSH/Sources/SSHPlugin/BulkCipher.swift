import BatchedCTR
import TermhostSDK

/// The bulk AES-CTR keystream (BatchedCTR) for libssh2's sessions, unless the operator's
/// setting `org.termhost.ssh` `bulkCipher` is `false`. Off, or refused by OpenSSL, libssh2
/// uses OpenSSL's own AES-CTR: slower, never less correct, and the log says why.
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
