import CTermhost

/// Writes a status and message into a caller-owned `termhost_error_t` (NULL is allowed and
/// ignored). The message is truncated at a UTF-8 boundary to fit TERMHOST_MESSAGE_SIZE.
public func termhostWriteError(_ err: UnsafeMutablePointer<termhost_error_t>?, _ code: Int32, _ message: String) {
    guard let err else { return }
    err.pointee.code = code
    withUnsafeMutableBytes(of: &err.pointee.message) { buf in
        let utf8 = Array(message.utf8)
        var n = min(utf8.count, buf.count - 1)
        // Do not cut a multi-byte character in half: back off to a character start.
        while n > 0, n < utf8.count, utf8[n] & 0xC0 == 0x80 { n -= 1 }
        buf.copyBytes(from: utf8[..<n])
        buf[n] = 0
    }
}

/// Reads the message a callee wrote into a `termhost_error_t`.
public func termhostErrorMessage(_ err: termhost_error_t) -> String {
    var copy = err
    return withUnsafeBytes(of: &copy.message) { buf in
        let bytes = buf.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An empty error record, ready to pass to a call.
public func termhostEmptyError() -> termhost_error_t {
    var err = termhost_error_t()
    err.code = Int32(TERMHOST_OK)
    return err
}

/// Strings and string lists that must outlive the call that made them: descriptors handed to
/// the host live as long as the plugin image, so they are allocated once and never freed.
enum Immortal {
    static func string(_ s: String) -> UnsafePointer<CChar> {
        UnsafePointer(strdup(s)!)
    }

    static func string(_ s: String?) -> UnsafePointer<CChar>? {
        s.map { string($0) }
    }

    /// A NULL-terminated array of C strings, or NULL for an empty list.
    static func list(_ items: [String]) -> UnsafePointer<UnsafePointer<CChar>?>? {
        guard !items.isEmpty else { return nil }
        let p = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: items.count + 1)
        for (i, s) in items.enumerated() { p[i] = string(s) }
        p[items.count] = nil
        return UnsafePointer(p)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The NUL-terminated UTF-8 text in a caller-owned buffer that a C call filled.
func stringFromBuffer(_ buf: [CChar]) -> String {
    String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
