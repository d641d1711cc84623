/// The few SFTP v3 packets termhost reads itself (the rest is libssh2's): big-endian numbers
/// and length-prefixed strings, as the server sends them.
///
/// Everything here reads bytes a server chose, so every length is checked against what is
/// there before it is used. This file uses nothing but the standard library, so the fuzz target
/// Tests/Fuzz/SFTPNamesFuzz.swift compiles it as it is.
enum SFTPWire {
    /// SSH_FXP_VERSION's extension pairs (name, data), read from offset 5 (after type and
    /// version) until the packet ends or a string does not fit. A name given twice keeps the last.
    static func extensions(ofVersion packet: [UInt8]) -> [String: String] {
        var found: [String: String] = [:]
        var at = 5
        while let name = packet.string(at: &at), let data = packet.string(at: &at) { found[name] = data }
        return found
    }
}

extension [UInt8] {
    mutating func appendUInt32(_ v: UInt32) { append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]) }
    mutating func appendString(_ s: String) { appendUInt32(UInt32(truncatingIfNeeded: s.utf8.count)); append(contentsOf: s.utf8) }
    /// The big-endian number at i; the caller checked that four bytes are there.
    func uint32(at i: Int) -> UInt32 { UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3]) }
    /// The string at i (a 32-bit length, then its bytes), and i moved past it; nil when the
    /// length or the bytes run past the end.
    func string(at i: inout Int) -> String? {
        guard i >= 0, i <= count - 4 else { return nil }
        let n = Int(uint32(at: i))
        guard n <= count - i - 4 else { return nil }
        defer { i += 4 + n }
        return String(decoding: self[(i + 4)..<(i + 4 + n)], as: UTF8.self)
    }
}
