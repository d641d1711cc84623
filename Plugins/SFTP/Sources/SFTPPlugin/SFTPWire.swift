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

    /// What limits@openssh.com answers (OpenSSH's PROTOCOL file): the largest packet, read and
    /// write the server accepts, and how many handles it keeps open (0: no limit).
    struct Limits: Equatable {
        let packet, read, write, handles: UInt64
    }

    /// SSH_FXP_EXTENDED_REPLY (type 201) to request `id`: four 64-bit numbers after type and id.
    /// nil for any other packet, another id, or one too short.
    static func limits(ofReply packet: [UInt8], id: UInt32) -> Limits? {
        guard packet.count >= 37, packet[0] == 201, packet.uint32(at: 1) == id else { return nil }
        func number(_ i: Int) -> UInt64 { packet[(5 + 8 * i)..<(13 + 8 * i)].reduce(0) { $0 << 8 | UInt64($1) } }
        return Limits(packet: number(0), read: number(1), write: number(2), handles: number(3))
    }

    /// The data bytes of one write request to a server with these limits: its largest write,
    /// within its largest packet less 1 KiB for the request's header and handle (a handle is at
    /// most 256 bytes), in whole 4 KiB pages (the server's write(2) then covers whole pages),
    /// at most `ceiling`. nil when that is no more than `standard`, which stays in use: a server
    /// that gives 0 or less than a default request gains nothing from the change.
    static func writeRequestSize(_ limits: Limits, standard: Int, ceiling: Int) -> Int? {
        let room = min(limits.write, limits.packet > 1024 ? limits.packet - 1024 : 0, UInt64(ceiling))
        let size = Int(room) / 4096 * 4096
        return size > standard ? size : nil
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
