import CLibSSH2
import LibSSH2
import Foundation

/// RFC 4254 6.9's "signal" request, so a command whose channel is closed early (a deadline, a
/// cancel) is also told to stop: closing only ends its pipes, and a command that neither reads
/// nor writes (`sleep 30`) would run on. OpenSSH's sshd delivers it to the session's process
/// group; a server that does not support it ignores it (want_reply is false).
///
/// libssh2 has the call since 1.11: looked up at run time like the banner (UserauthBanner), so
/// one build works with the system's 1.10, where this does nothing.
enum ChannelSignal {
    typealias Function = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int) -> Int32

    private static let function: Function? = lookUp()

    /// Sends "signal" with `name` (without "SIG"). [executor, the session's own blocking mode]
    /// Returns libssh2's code (LIBSSH2_ERROR_EAGAIN in non-blocking mode when it must be repeated).
    static func send(_ channel: OpaquePointer, _ name: String) -> Int32 {
        guard let function else { return 0 }
        return name.withCString { function(channel, $0, name.utf8.count) }
    }

    private static func lookUp() -> Function? { LibSSH2.optionalFunction("libssh2_channel_signal_ex", as: Function.self) }
}
