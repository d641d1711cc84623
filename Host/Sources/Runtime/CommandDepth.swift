import CTermhost
import Foundation
import TermhostSDK

/// How many run_command() calls are active on the calling thread. The commands service
/// refuses a call past TERMHOST_COMMAND_DEPTH_LIMIT (16): a command that runs itself used to
/// recurse until the host's stack overflowed (about 4,400 levels, SIGSEGV). Per thread,
/// because re-entry through termhost.commands/1 is a synchronous call on the same thread.
enum CommandDepth {
    static let limit = Int(TERMHOST_COMMAND_DEPTH_LIMIT)
    private static let key = "org.termhost.commandDepth"

    static var current: Int { Thread.current.threadDictionary[key] as? Int ?? 0 }

    static func enter() { Thread.current.threadDictionary[key] = current + 1 }
    static func leave() { Thread.current.threadDictionary[key] = max(current - 1, 0) }

    /// The refusal for running `command` from here, or nil when it may run.
    static func refusal(_ command: String) -> String? {
        guard current >= limit else { return nil }
        return "run: command '\(VisibleText.of(command))' refused: commands nested \(limit) deep already (a command running commands, itself among them); the limit is \(limit) levels"
    }
}
