import AssistantCore
import TermhostSDK

/// What a run may do without asking the person: `--full-access` (every Ask pre-approved,
/// never a Deny or a boundary) and `--reviewer NAME` ("approve for me": Ask calls go first to a
/// second, tool-free request to the saved provider NAME). The policy files can turn either off
/// (`assistant.fullAccess`, `assistant.reviewer`); the gate honours them only then.
struct RunAccess {
    var fullAccess = false
    var reviewer: (provider: any ModelProvider, name: String)?
    var reviewerTimeout: Duration = .seconds(60)

    static let options: [CommandArguments.Option] = [.flag("--full-access"), .value("--reviewer"), .value("--reviewer-timeout")]
    /// Seconds a reviewer may take before its answer counts as unavailable.
    static let reviewerTimeoutSeconds = 1...600

    /// The access the command line asks for; the reviewer's provider resolved now, so a
    /// misspelt name fails before the run starts. Throws CommandUsageError for a usage error.
    init(_ parsed: ParsedArguments, host: PluginHost) throws {
        fullAccess = parsed.has("--full-access")
        if let seconds = try parsed.integer("--reviewer-timeout", in: Self.reviewerTimeoutSeconds, unit: "seconds") {
            guard parsed.has("--reviewer") else { throw CommandUsageError(command: parsed.command, problem: "--reviewer-timeout needs --reviewer NAME") }
            reviewerTimeout = .seconds(seconds)
        }
        if let name = parsed.value("--reviewer") {
            let chosen = try ProviderChoice.resolve(name, host: host)
            reviewer = (chosen.provider, chosen.name)
        }
    }

    init() {}

    /// The reviewer for one run, judging calls against the question that started it.
    func reviewer(for question: String) -> (any CallReviewer)? {
        reviewer.map { ModelReviewer(provider: $0.provider, task: question, timeout: reviewerTimeout) }
    }

    /// Why an option asked for has no effect, to print once per run.
    func warnings(_ policy: AssistantPolicy?) -> [String] {
        guard let policy else { return [] }
        var out: [String] = []
        if fullAccess && !policy.allowsFullAccess {
            out.append("--full-access has no effect: the assistant policy turns full access off (\"fullAccess\": false); Asks are answered as usual")
        }
        if reviewer != nil && !policy.allowsReviewer {
            out.append("--reviewer has no effect: the assistant policy turns the reviewer off (\"reviewer\": false); Asks are answered as usual")
        }
        return out
    }
}
