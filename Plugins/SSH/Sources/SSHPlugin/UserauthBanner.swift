import CLibSSH2
import LibSSH2
import Glibc
import TermhostSDK

/// The server's userauth banner (sshd's `Banner` file), which OpenSSH prints on stderr before
/// authentication. libssh2 1.11 keeps it and hands it out through `libssh2_userauth_banner`;
/// 1.10 reads it and drops it, and has no such function. The function is looked up at run time
/// in the libssh2 this plugin was loaded with, so one build shows the banner on 1.11 and
/// builds (and runs, without a banner) on 1.10.
enum UserauthBanner {
    /// `int libssh2_userauth_banner(LIBSSH2_SESSION *, char **banner)` (libssh2 1.11).
    private typealias Function = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32

    /// The banner the server sent with its answer to the `none` request, as the terminal should
    /// show it; nil when there was none or this libssh2 cannot tell. [session]
    static func shown(_ session: OpaquePointer) -> String? {
        guard let function = lookUp() else { return nil }
        var banner: UnsafeMutablePointer<CChar>?
        // The text stays the session's (freed with it): copied at once.
        guard function(session, &banner) == 0, let banner else { return nil }
        let text = visible(Array(UnsafeRawBufferPointer(start: banner, count: strlen(banner))))
        return text.isEmpty ? nil : text
    }

    /// Each line with its control characters visible (an escape sequence cannot clear the
    /// screen or set the title), line breaks and tabs kept, as OpenSSH keeps them (its strvis
    /// with VIS_SAFE); CRLF line ends are read as one break, and the last line's break is left
    /// to the caller.
    static func visible(_ bytes: [UInt8]) -> String {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { line in
            let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return text.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
                .map { VisibleText.of(bytes: $0) }.joined(separator: "\t")
        }.joined(separator: "\n")
    }

    private static func lookUp() -> Function? { LibSSH2.optionalFunction("libssh2_userauth_banner", as: Function.self) }
}
