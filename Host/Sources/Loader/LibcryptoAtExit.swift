import CCrypto

/// Keeps libcrypto alive until the process is gone.
///
/// Plugin threads can outlive the host's bounded shutdown (a feature abandoned at the bound,
/// a connection still closing), and many of them run inside libcrypto: libssh2, the SSH
/// plugin's cipher provider. OpenSSL's own atexit handler frees its locks and providers while
/// such a thread may still use them, which turns a clean exit into a crash (SIGSEGV in
/// pthread_rwlock_wrlock). So the host asks OpenSSL not to tear itself down at exit; the
/// kernel reclaims the memory anyway. OpenSSL decides this on its first initialisation, so
/// this runs before the host touches libcrypto for anything else.
public enum LibcryptoAtExit {
    public static func keepUntilProcessEnds() {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
