import BatchedCTR
import TermhostSDK

/// Turns on the bulk AES-CTR keystream (BatchedCTR) unless the operator's setting
/// `org.termhost.ssh` `bulkCipher` is `false`. Off, or refused by OpenSSL, libssh2 uses
/// OpenSSL's own AES-CTR as before: slower, never less correct, and the log says why.
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
            host.log(.debug, "bulk AES-CTR keystream on (OpenSSL provider 'termhost')")
        } else {
            host.log(.warning, "bulk AES-CTR keystream off: \(String(decoding: why.prefix { $0 != 0 }, as: UTF8.self)); bulk transfers use more CPU")
        }
    }
}
