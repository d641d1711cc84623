import CLibSSH2
import LibSSH2
import Foundation
import TermhostSDK

/// How a remote command ended, as the server reported it (RFC 4254 6.10) and as our process
/// reports it: its status when that is 0...255; 255 for a signal (named, shown safe, not obeyed),
/// for a number outside 0...255 (a process exit status has 8 bits; 256 would read as success),
/// and for a channel the server closed without any report. The last is never 0: libssh2 returns
/// 0 when nothing came, which would call a command a success that may have failed (OpenSSH's
/// ssh exits 255 there too).
struct ExitStatus {
    let status: Int32
    /// The signal's name when one ended the command.
    let signal: String?
    /// The line for stderr when the status is 255 for a reason the command did not give.
    let message: String?

    /// Read once the channel is closed (the server's report comes before its close).
    static func of(_ channel: OpaquePointer) -> ExitStatus {
        var name: UnsafeMutablePointer<CChar>?
        var nameLength = 0
        libssh2_channel_get_exit_signal(channel, &name, &nameLength, nil, nil, nil, nil)
        if let name {
            let signal = VisibleText.of(String(cString: name))
            free(name)
            return ExitStatus(status: 255, signal: signal, message: "termhost: remote command killed by signal \(signal)\n")
        }
        if let reported, reported(channel) == 0 {
            return ExitStatus(status: 255, signal: nil,
                              message: "termhost: the server closed the channel without an exit status; reporting 255\n")
        }
        let status = libssh2_channel_get_exit_status(channel)
        return ExitStatus(status: (0...255).contains(status) ? status : 255, signal: nil, message: nil)
    }

    /// Termhost's libssh2 patch (Scripts/libssh2-patches/exit-reported.patch) tells whether a
    /// report came; looked up at run time, so with a libssh2 without it the status reads as
    /// libssh2 gives it.
    private typealias Reported = @convention(c) (OpaquePointer?) -> Int32
    private static let reported = LibSSH2.optionalFunction("libssh2_channel_termhost_exit_reported", as: Reported.self)
}
