import CLibSSH2

/// Random bytes from libcrypto's CSPRNG (RAND_bytes), for salts.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        _ = RAND_bytes(&out, Int32(count))
        return out
    }
}
