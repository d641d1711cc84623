import Foundation
import CTermhost
import TermhostSDK

/// Checks of the values a plugin passes into a host service, before any of them is used. Each
/// returns the value or a message for TERMHOST_ERR_INVALID_ARGUMENT naming the call and the
/// argument. Why refuse rather than repair: a key that is not UTF-8 was decoded with U+FFFD
/// replacements, so two different keys became one and the second put overwrote the first; a
/// NULL value with a length was stored as empty, losing what the caller meant to store.
enum BoundaryArguments {
    struct Refusal: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// A required NUL-terminated UTF-8 string ("put: key is NULL", "put: key is not valid UTF-8
    /// (byte 0xff at offset 1)").
    static func text(_ p: UnsafePointer<CChar>?, _ name: String, call: String) throws(Refusal) -> String {
        guard let p else { throw Refusal("\(call): \(name) is NULL") }
        return try utf8(p, name, call: call)
    }

    /// An optional string: NULL stays nil, anything else must be UTF-8.
    static func optionalText(_ p: UnsafePointer<CChar>?, _ name: String, call: String) throws(Refusal) -> String? {
        guard let p else { return nil }
        return try utf8(p, name, call: call)
    }

    private static func utf8(_ p: UnsafePointer<CChar>, _ name: String, call: String) throws(Refusal) -> String {
        if let s = String(validatingCString: p) { return s }
        // Name the first byte that breaks the encoding, so the author can find it.
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
        let at = min(ArgumentRules.firstInvalidUTF8(bytes) ?? 0, bytes.count - 1)
        throw Refusal("\(call): \(name) is not valid UTF-8 (byte 0x\(String(bytes[at], radix: 16)) at offset \(at)); refused rather than rewritten, so that two different keys never become one")
    }

    /// `size` bytes at `p`, copied. NULL is allowed only with size 0.
    static func bytes(_ p: UnsafeRawPointer?, _ size: Int, _ name: String, call: String) throws(Refusal) -> [UInt8] {
        guard let p else {
            if size != 0 { throw Refusal("\(call): \(name) is NULL but its size is \(size) bytes") }
            return []
        }
        return Array(UnsafeRawBufferPointer(start: p, count: size))
    }

    /// An event topic (ArgumentRules.topicProblem): 1 to 200 bytes of [a-z0-9._-]
    /// ("org.termhost.ssh.connected"). Subscribing may also use "*" (every topic). A topic is
    /// matched byte for byte, so a rule this narrow keeps look-alikes (case, Unicode, spaces,
    /// control characters) from splitting one topic into several that subscribers never see,
    /// and keeps topics safe to print in logs.
    static func topic(_ p: UnsafePointer<CChar>?, call: String, wildcard: Bool = false) throws(Refusal) -> String {
        let t = try text(p, "topic", call: call)
        if wildcard && t == "*" { return t }
        switch ArgumentRules.topicProblem(t) {
        case nil: return t
        case .empty?: throw Refusal("\(call): topic is empty")
        case .tooLong(let bytes)?:
            throw Refusal("\(call): topic is \(bytes) bytes, more than the \(ArgumentRules.maxTopicBytes) a topic may have")
        case .character(let bad)?:
            throw Refusal("\(call): topic '\(VisibleText.of(String(t.prefix(60))))' contains \(describe(bad)); a topic is lowercase letters, digits, '.', '_' and '-'")
        }
    }

    static func describe(_ c: Unicode.Scalar) -> String {
        c.value < 0x20 || c.value == 0x7F || !c.isASCII
            ? "U+" + String(format: "%04X", c.value) : "'\(c)'"
    }

    /// An event payload: NULL means JSON null; anything else must be one JSON value (the
    /// header promises subscribers JSON, and a subscriber's parser must not be the first to
    /// find out it is not).
    static func json(_ p: UnsafePointer<CChar>?, call: String) throws(Refusal) -> String {
        guard let text = try optionalText(p, "payload", call: call) else { return "null" }
        guard ArgumentRules.isJSON(text) else {
            throw Refusal("\(call): payload is not JSON: '\(VisibleText.of(String(text.prefix(60))))\(text.count > 60 ? "…" : "")'")
        }
        return text
    }
}
