import TermhostSDK

/// The command line of `termhost exec` and `termhost ssh`: options (`-J`) before HOST, and after
/// HOST the remote command exactly as typed, since its options are the remote program's.
struct RemoteCommandArguments {
    static let execUsage = "usage: termhost exec [-q] [-A|-a] [-t|-tt|-T] [-J JUMP[,JUMP...]] [-o SendEnv=PATTERN] [-o SetEnv=NAME=VALUE] HOST [--] COMMAND [ARG]..."
    static let sshUsage = "usage: termhost ssh [-q] [-A|-a] [-t|-tt|-T] [-J JUMP[,JUMP...]] [-o SendEnv=PATTERN] [-o SetEnv=NAME=VALUE] [-W HOST:PORT] HOST [COMMAND [ARG]...]"

    /// ssh's -t and -T: whether the remote side gets a pseudo-terminal.
    enum Terminal: Equatable {
        /// A terminal for a shell when stdin is one; none for a command.
        case auto
        /// `-t`: a terminal for the command too, when stdin is one; `-tt` (twice): even when not.
        case force(twice: Bool)
        /// `-T`: never.
        case never
    }

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
    /// `-t`, `-tt` or `-T`, the last one given winning, as ssh's.
    let terminal: Terminal
    /// `-W HOST:PORT` (ssh only): stdin and stdout joined to that address, as seen from the server.
    let stdioForward: (host: String, port: Int)?
    /// `-o SendEnv=...` and `-o SetEnv=...`, in order (the only `-o` options taken).
    let environment: RemoteEnvironment

    /// Throws the status to return once a usage error, or the usage for `--help`, is written.
    init(_ c: CommandInvocation) throws(CommandFinished) {
        let spec = CommandArguments("termhost \(c.command)", usage: c.command == "ssh" ? Self.sshUsage : Self.execUsage,
                                    options: [.value("-J"), .value("-o"), .flag("-q"), .flag("-A"), .flag("-a"), .flag("-t"), .flag("-tt"), .flag("-T")]
                                        + (c.command == "ssh" ? [.value("-W")] : []),
                                    optionsEndAtFirstArgument: true)
        let parsed = try c.parse(with: spec)
        jump = parsed.value("-J").map { $0.split(separator: ",").map(String.init) } ?? []
        host = parsed.arguments.first
        command = Array(parsed.arguments.dropFirst())
        quiet = parsed.has("-q")
        forwardAgent = parsed.occurrences.last { $0.option == "-A" || $0.option == "-a" }.map { $0.option == "-A" }
        // As ssh: -T resets, each -t after the last -T counts, two make -tt.
        let afterT = parsed.occurrences.reversed().prefix { $0.option != "-T" }
        let ts = afterT.reduce(0) { $0 + ($1.option == "-t" ? 1 : $1.option == "-tt" ? 2 : 0) }
        terminal = ts > 0 ? .force(twice: ts > 1) : parsed.has("-T") ? .never : .auto
        var environment = RemoteEnvironment()
        for option in parsed.values("-o") {
            switch RemoteCommandArguments.environmentOption(option) {
            case .success(let (send, set)): environment.sendEnv += send; environment.setEnv += set
            case .failure(let why):
                c.printError("termhost \(c.command): -o '\(VisibleText.of(option))': \(why.message)")
                throw CommandFinished(status: 2)
            }
        }
        if let why = HostRules.environment(sendEnv: environment.sendEnv, setEnv: environment.setEnv) {
            c.printError("termhost \(c.command): -o: \(why)")
            throw CommandFinished(status: 2)
        }
        self.environment = environment
        if let w = parsed.value("-W") {
            guard let address = StdioForward.address(w) else {
                c.printError("termhost ssh: -W '\(VisibleText.of(w))' is not HOST:PORT (a host name or address, [IPv6] in brackets, a port from 1 to 65535)")
                throw CommandFinished(status: 2)
            }
            guard command.isEmpty else {
                c.printError("termhost ssh: -W joins stdin and stdout to an address and runs no command; leave out '\(VisibleText.of(command.joined(separator: " ")))'")
                throw CommandFinished(status: 2)
            }
            stdioForward = address
        } else {
            stdioForward = nil
        }
    }

    struct Refusal: Error { let message: String }

    /// One `-o` option, `Keyword=VALUE` or `Keyword VALUE` as ssh takes it: SendEnv's patterns
    /// and SetEnv's `NAME=VALUE` entries (several, separated by white space). Any other keyword
    /// is refused by name: silently ignoring an option a user relies on (a different port,
    /// a stricter check) would be worse than stopping.
    static func environmentOption(_ option: String) -> Result<(send: [String], set: [String]), Refusal> {
        let keywordEnd = option.firstIndex { $0 == "=" || $0 == " " || $0 == "\t" } ?? option.endIndex
        let keyword = option[..<keywordEnd].lowercased()
        var rest = option[keywordEnd...].drop { $0 == " " || $0 == "\t" }
        if rest.first == "=" { rest = rest.dropFirst() }
        let values = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard keyword == "sendenv" || keyword == "setenv" else {
            return .failure(Refusal(message: "termhost takes only SendEnv and SetEnv with -o (other OpenSSH options are saved with 'termhost hosts edit' where supported)"))
        }
        guard !values.isEmpty else { return .failure(Refusal(message: "\(keyword == "sendenv" ? "SendEnv" : "SetEnv") needs a value")) }
        return .success(keyword == "sendenv" ? (values, []) : ([], values))
    }

    /// Where the server's banner goes: stderr, as ssh shows it, unless quiet or `--json` (the
    /// output is then for a program, and a banner would only get in its way).
    func bannerOutput(_ c: CommandInvocation) -> (@Sendable (String) -> Void)? {
        guard !quiet && !c.jsonOutput else { return nil }
        return { c.printError($0) }
    }

    /// Where a warning that does not stop the session goes (agent forwarding not set up):
    /// stderr, unless quiet, as ssh -q suppresses its warnings.
    func warningOutput(_ c: CommandInvocation) -> @Sendable (String) -> Void {
        if quiet { return { _ in } }
        return { c.printError($0) }
    }
}
