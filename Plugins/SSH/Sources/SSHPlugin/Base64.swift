/// Base64 without Foundation's quirks, for SSH key blobs, known_hosts lines and fingerprints.
///
/// Decoding goes through a 256-entry table (one lookup a byte, no allocation but the output):
/// a 20,000-line known_hosts decodes every key of every line on each connection.
///
/// This file uses nothing but the standard library, so the known_hosts fuzz target compiles it.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for an alphabet byte, 0xff for anything else.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    static func encode(_ bytes: [UInt8], padding: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            if i + 1 < bytes.count { out.append(alphabet[Int((b1 & 15) << 2 | b2 >> 6)]) } else if padding { out.append(UInt8(ascii: "=")) }
            if i + 2 < bytes.count { out.append(alphabet[Int(b2 & 63)]) } else if padding { out.append(UInt8(ascii: "=")) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: Substring) -> [UInt8]? { decode(bytes: Array(text.utf8)[...]) }

    /// Decodes up to the first `=`; nil when a byte before it is not in the alphabet.
    static func decode(bytes text: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0, bits = 0
        for c in text {
            if c == UInt8(ascii: "=") { break }
            let v = values[Int(c)]
            guard v != 0xff else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return out
    }
}
