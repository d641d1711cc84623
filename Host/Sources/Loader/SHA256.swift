import CCrypto
import Glibc

/// SHA-256 through OpenSSL's EVP interface (libcrypto, already a dependency of libssh2).
public enum SHA256 {
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
        return digest.map { String($0, radix: 16).leftPadded(2) }.joined()
    }
}

/// A failed system call, with errno and the call's name.
public struct LoaderIOError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
