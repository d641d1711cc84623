import CCrypto
import Glibc

/// The SHA-256 that names a plugin's library (and its manifest) in the probe cache, the pinned
/// set and the crash marker, through OpenSSL's EVP interface (libcrypto, already a dependency of
/// libssh2). The host's own: the loader never links plugin code.
public enum LibraryHash {
    /// Hex digest of everything readable from fd, read with pread from offset 0 so the caller's
    /// file position is untouched.
    public static func hex(fd: Int32) throws(LoaderIOError) -> String {
        guard let ctx = EVP_MD_CTX_new() else { throw LoaderIOError(call: "EVP_MD_CTX_new", errno: ENOMEM) }
        defer { EVP_MD_CTX_free(ctx) }
        EVP_DigestInit_ex(ctx, EVP_sha256(), nil)
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        var offset: off_t = 0
        while true {
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LoaderIOError(call: "pread", errno: errno)
            }
            if n == 0 { break }
            EVP_DigestUpdate(ctx, buf, n)
            offset += off_t(n)
        }
        return finish(ctx)
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let ctx = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(ctx) }
        EVP_DigestInit_ex(ctx, EVP_sha256(), nil)
        EVP_DigestUpdate(ctx, bytes, bytes.count)
        return finish(ctx)
    }

    private static func finish(_ ctx: OpaquePointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(ctx, &digest, &length)
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
    }
}

/// A failed system call, with errno and the call's name.
public struct LoaderIOError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
