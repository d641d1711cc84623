import CLibSSH2
import TermhostSDK

/// The one place libssh2's errors are read and turned into text, for the SSH and SFTP plugins.
///
/// Why one place: libssh2's last-error message can quote the server (a disconnect reason, a
/// refused request, an SFTP status text), so it is escaped here, once, before any caller puts it
/// in a message that reaches a terminal; and a call that failed without saying why (libssh2 1.10
/// leaves no message behind some codes) is still named, by its code.
public enum LibSSH2 {
    /// The session's last error as shown text: libssh2's message with control characters made
    /// visible, or "libssh2 error N, with no message". Read at once: the next call on the
    /// session replaces it.
    public static func lastError(_ session: OpaquePointer?) -> String {
        guard let session else { return "no session" }
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        let code = libssh2_session_last_error(session, &message, &length, 0)
        let text = message.map { String(cString: $0) } ?? ""
        return text.isEmpty ? "libssh2 error \(code), with no message" : VisibleText.of(text)
    }

    /// The session's last error code (LIBSSH2_ERROR_*; 0 when none).
    public static func lastErrno(_ session: OpaquePointer?) -> Int32 {
        session.map { libssh2_session_last_errno($0) } ?? 0
    }

    /// Whether a call's return code means "would block: call again when the socket is ready"
    /// (non-blocking sessions), the one mapping of LIBSSH2_ERROR_EAGAIN.
    @inline(__always) public static func wouldBlock(_ rc: Int32) -> Bool { rc == LIBSSH2_ERROR_EAGAIN }
    @inline(__always) public static func wouldBlock(_ rc: Int) -> Bool { rc == Int(LIBSSH2_ERROR_EAGAIN) }

    /// Whether a call that returns a pointer (a channel, an SFTP handle) and gave nil would
    /// block rather than fail: libssh2 says so only through the session's last errno.
    @inline(__always) public static func wouldBlock(nilFrom session: OpaquePointer?) -> Bool {
        lastErrno(session) == LIBSSH2_ERROR_EAGAIN
    }
}
