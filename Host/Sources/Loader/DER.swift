/// The little DER (X.690) that turns SSH's key and signature encodings into the ones libcrypto
/// reads: SubjectPublicKeyInfo for EC and RSA keys, SEC1 ECPrivateKey, and ECDSA's
/// SEQUENCE { INTEGER r, INTEGER s }. Written for inputs already checked by the SSH parsers.
enum DER {
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var n = content.count
            length = []
            while n > 0 { length.insert(UInt8(n & 0xff), at: 0); n >>= 8 }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    static func sequence(_ parts: [UInt8]...) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }

    /// A non-negative INTEGER from a big-endian magnitude.
    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        let trimmed = Array(magnitude.drop { $0 == 0 })
        if trimmed.isEmpty { return element(0x02, [0]) }
        return element(0x02, trimmed[0] & 0x80 != 0 ? [0] + trimmed : trimmed)
    }

    static func bitString(_ bytes: [UInt8]) -> [UInt8] { element(0x03, [0] + bytes) }
    static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }

    /// The two INTEGERs of SEQUENCE { INTEGER, INTEGER }, as big-endian magnitudes; nil when
    /// the bytes are anything else (libcrypto wrote them, so this is a check, not a parser of
    /// untrusted input).
    static func integerPair(_ der: [UInt8]) -> ([UInt8], [UInt8])? {
        func read(_ bytes: ArraySlice<UInt8>, tag: UInt8) -> (content: ArraySlice<UInt8>, rest: ArraySlice<UInt8>)? {
            guard bytes.count >= 2, bytes.first == tag else { return nil }
            var i = bytes.startIndex + 1
            var length = Int(bytes[i])
            i += 1
            if length & 0x80 != 0 {
                let count = length & 0x7f
                guard count >= 1, count <= 2, bytes.endIndex - i >= count else { return nil }
                length = bytes[i..<i + count].reduce(0) { $0 << 8 | Int($1) }
                i += count
            }
            guard bytes.endIndex - i >= length else { return nil }
            return (bytes[i..<i + length], bytes[(i + length)...])
        }
        guard let seq = read(der[...], tag: 0x30), seq.rest.isEmpty,
              let r = read(seq.content, tag: 0x02), let s = read(r.rest, tag: 0x02), s.rest.isEmpty else { return nil }
        return (Array(r.content.drop { $0 == 0 }), Array(s.content.drop { $0 == 0 }))
    }
}
