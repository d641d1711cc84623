import Foundation

/// Why bytes in one of OpenSSH's formats (a public key, an SSHSIG signature, an allowed signers
/// line, a private key) were refused, in words an operator can act on.
public struct SSHFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    public let detail: String
    public init(_ detail: String) { self.detail = detail }
    public var description: String { detail }
}

/// Reads the SSH wire encoding (RFC 4251 §5: uint32, string, mpint) from bytes that came from
/// outside. Every length is checked against what remains before anything is copied, so a
/// length field of 4 GiB costs nothing.
public struct SSHWireReader {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }
    public var remaining: Int { bytes.count - offset }

    public mutating func uint32(_ what: String) throws(SSHFormatError) -> UInt32 {
        guard remaining >= 4 else { throw SSHFormatError("\(what): truncated") }
        let v = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        offset += 4
        return v
    }

    public mutating func raw(_ count: Int, _ what: String) throws(SSHFormatError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw SSHFormatError("\(what): truncated") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A length-prefixed byte string.
    public mutating func string(_ what: String) throws(SSHFormatError) -> [UInt8] {
        let length = try uint32(what)
        guard UInt64(length) <= UInt64(remaining) else { throw SSHFormatError("\(what): length \(length) runs past the end") }
        return try raw(Int(length), what)
    }

    /// A length-prefixed name (key type, namespace...): UTF-8 without NUL.
    public mutating func text(_ what: String) throws(SSHFormatError) -> String {
        let value = try string(what)
        guard !value.contains(0), let text = String(validating: value, as: UTF8.self) else {
            throw SSHFormatError("\(what): not UTF-8 text")
        }
        return text
    }

    /// A non-negative mpint's magnitude, big-endian without leading zeros.
    public mutating func positiveMPInt(_ what: String) throws(SSHFormatError) -> [UInt8] {
        let value = try string(what)
        if let first = value.first, first & 0x80 != 0 { throw SSHFormatError("\(what): negative") }
        // RFC 4251: no unnecessary leading zero byte.
        if value.count >= 2 && value[0] == 0 && value[1] & 0x80 == 0 { throw SSHFormatError("\(what): not in minimal form") }
        return Array(value.drop { $0 == 0 })
    }
}

/// Writes the SSH wire encoding; the counterpart of `SSHWireReader`.
public struct SSHWireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func uint32(_ v: UInt32) {
        bytes += [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]
    }

    public mutating func string(_ value: [UInt8]) {
        uint32(UInt32(value.count))
        bytes += value
    }

    public mutating func string(_ value: String) { string(Array(value.utf8)) }

    /// A non-negative integer given as big-endian magnitude.
    public mutating func positiveMPInt(_ magnitude: [UInt8]) {
        let trimmed = Array(magnitude.drop { $0 == 0 })
        string(trimmed.first.map { $0 & 0x80 != 0 } == true ? [0] + trimmed : trimmed)
    }
}

/// OpenSSH's ASCII armour: "-----BEGIN <LABEL>-----", base64 lines, "-----END <LABEL>-----".
public enum SSHArmor {
    public static func decode(_ text: String, label: String) throws(SSHFormatError) -> [UInt8] {
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard let first = lines.firstIndex(of: begin) else { throw SSHFormatError("no '\(begin)' line") }
        guard let last = lines[first...].firstIndex(of: end) else { throw SSHFormatError("no '\(end)' line") }
        let body = lines[(first + 1)..<last].joined()
        guard !body.isEmpty, let data = Data(base64Encoded: body) else { throw SSHFormatError("the text between the \(label) lines is not base64") }
        return [UInt8](data)
    }

    /// Armoured text with base64 lines of 70 characters, as ssh-keygen writes it.
    public static func encode(_ bytes: [UInt8], label: String) -> String {
        let body = Data(bytes).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var rest = Substring(body)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(70)))
            rest = rest.dropFirst(70)
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
