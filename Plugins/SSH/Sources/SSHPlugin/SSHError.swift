/// A failure of one SSH operation, worded like OpenSSH's: program, what, subject, cause.
struct SSHError: Error, CustomStringConvertible {
    let message: String
    /// The exit status `termhost ssh`/`exec` return for it (255, as ssh does, for connection
    /// and authentication failures).
    var status: Int32 = 255
    init(_ message: String, status: Int32 = 255) {
        self.message = message
        self.status = status
    }
    var description: String { message }
}

import Foundation

/// The user's home: $HOME as OpenSSH uses it, else the password database's.
var homeDirectory: String { ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() }
