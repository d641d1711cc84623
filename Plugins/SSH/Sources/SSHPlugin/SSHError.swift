/// A failure of one SSH operation, worded like OpenSSH's: program, what, subject, cause.
struct SSHError: Error, CustomStringConvertible {
    /// `refused`: the host key or the credentials were refused (no retry will help without a
    /// change); `failed`: anything else (network, server, local).
    enum Kind { case failed, refused }
    /// For a refusal, what was refused: work no person watches (tools) tells the user what to run.
    enum Cause { case unknownHostKey, changedHostKey, credentials }
    let message: String
    var kind: Kind = .failed
    var cause: Cause? = nil
    /// The exit status `termhost ssh`/`exec` return for it (255, as ssh does, for connection
    /// and authentication failures).
    var status: Int32 = 255
    init(_ message: String, status: Int32 = 255, kind: Kind = .failed, cause: Cause? = nil) {
        self.message = message
        self.status = status
        self.kind = kind
        self.cause = cause
    }
    var description: String { message }
}

import Foundation

/// The user's home: $HOME as OpenSSH uses it, else the password database's.
var homeDirectory: String { ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() }
