import TermhostSDK

/// The command line of `termhost exec` and `termhost ssh`: options (`-J`) before HOST, and after
/// HOST the remote command exactly as typed, since its options are the remote program's.
struct RemoteCommandArguments {
    static let execUsage = "usage: termhost exec [-q] [-A|-a] [-J JUMP[,JUMP...]] HOST [--] COMMAND [ARG]..."
    static let sshUsage = "usage: termhost ssh [-q] [-A|-a] [-J JUMP[,JUMP...]] HOST [COMMAND [ARG]...]"

    /// Jump hosts from `-J a,b`, outermost first.
    let jump: [String]
    let host: String?
    /// The remote command and its arguments (a leading `--` kept, for exec to drop).
    let command: [String]
    /// `-q`, as ssh's: the server's banner is not shown.
    let quiet: Bool
    /// `-A` (true) or `-a` (false), as ssh's, the last one given winning; nil leaves the saved
    /// host's ForwardAgent setting.
    let forwardAgent: Bool?

    /// Throws the status to return once a usage error, or the usage for `--help`, is written.
    init(_ c: CommandInvocation) throws(CommandFinished) {
        let spec = CommandArguments("termhost \(c.command)", usage: c.command == "ssh" ? Self.sshUsage : Self.execUsage,
                                    options: [.value("-J"), .flag("-q"), .flag("-A"), .flag("-a")], optionsEndAtFirstArgument: true)
        let parsed = try c.parse(with: spec)
        jump = parsed.value("-J").map { $0.split(separator: ",").map(String.init) } ?? []
        host = parsed.arguments.first
        command = Array(parsed.arguments.dropFirst())
        quiet = parsed.has("-q")
        forwardAgent = parsed.occurrences.last { $0.option == "-A" || $0.option == "-a" }.map { $0.option == "-A" }
    }

    /// Where the server's banner goes: stderr, as ssh shows it, unless quiet or `--json` (the
    /// output is then for a program, and a banner would only get in its way).
    func bannerOutput(_ c: CommandInvocation) -> (@Sendable (String) -> Void)? {
        guard !quiet && !c.jsonOutput else { return nil }
        return { c.printError($0) }
    }

    /// Where a warning that does not stop the session goes (agent forwarding not set up):
    /// stderr, unless quiet, as ssh -q suppresses its warnings.
    func warningOutput(_ c: CommandInvocation) -> (String) -> Void {
        quiet ? { _ in } : { c.printError($0) }
    }
}
