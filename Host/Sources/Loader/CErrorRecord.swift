import CTermhost

/// Reading and writing `termhost_error_t` on the host side of the boundary.
public enum CErrorRecord {
    /// Writes code and message (truncated at a UTF-8 boundary); NULL err is ignored.
    public static func write(_ err: UnsafeMutablePointer<termhost_error_t>?, _ code: Int, _ message: String) {
        guard let err else { return }
        err.pointee.code = Int32(code)
        withUnsafeMutableBytes(of: &err.pointee.message) { buf in
            let utf8 = Array(message.utf8)
            var n = min(utf8.count, buf.count - 1)
            while n > 0, n < utf8.count, utf8[n] & 0xC0 == 0x80 { n -= 1 }
            buf.copyBytes(from: utf8[..<n])
            buf[n] = 0
        }
    }

    public static func message(_ err: termhost_error_t) -> String {
        var copy = err
        return withUnsafeBytes(of: &copy.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
