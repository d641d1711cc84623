import CLibSSH2
import TermhostSDK

/// A server's SSH_MSG_DISCONNECT (RFC 4253 section 11.1), kept for the message OpenSSH prints:
/// `Received disconnect from HOST port PORT:CODE: TEXT`. libssh2 itself only reports "socket
/// disconnect" for it; the reason code and the server's text reach the disconnect callback
/// alone, so the callback stores them in the session's context.
struct ServerDisconnect {
    let reason: Int32
    /// The server's text, control characters visible.
    let text: String

    /// Starts keeping the server's disconnect message for this session. [session]
    static func watch(_ session: OpaquePointer) {
        libssh2_session_callback_set(session, LIBSSH2_CALLBACK_DISCONNECT, unsafeBitCast(disconnectCallback, to: UnsafeMutableRawPointer.self))
    }

    /// OpenSSH's wording (sshconnect.c's disconnect report), for a connection to `address`.
    func message(address: String, port: Int) -> String {
        "Received disconnect from \(address) port \(port):\(reason): \(text)"
    }

    /// sshd's words when MaxAuthTries is used up (auth.c, auth_maxtries_exceeded).
    var isTooManyAuthenticationFailures: Bool { text.contains("Too many authentication failures") }
}

/// libssh2's disconnect callback (LIBSSH2_DISCONNECT_FUNC): the context is the session's
/// abstract pointer, as for the other callbacks.
private let disconnectCallback: @convention(c) (
    OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Void = { _, reason, message, length, _, _, abstract in
    guard let raw = abstract?.pointee else { return }
    let context = Unmanaged<SessionContext>.fromOpaque(raw).takeUnretainedValue()
    var text = ""
    if let message, length > 0 {
        var bytes = UnsafeRawBufferPointer(start: message, count: Int(length))[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        text = VisibleText.of(bytes: bytes)
    }
    context.disconnect = ServerDisconnect(reason: reason, text: text)
}
