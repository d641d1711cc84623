import TermhostSDK

/// The host's own commands read their arguments as every plugin command does, with
/// `CommandArguments`: one parser, and one wording for its errors ("termhost plugins manifest:
/// unknown option '--outptu'. Did you mean '--output'?" and the usage), `--help` answered the
/// same way.
enum HostArguments {
    /// The parsed arguments, or the exit status after the error or the usage was printed.
    static func parse(_ args: [String], _ spec: CommandArguments) -> Result<ParsedArguments, Finished> {
        let parsed: ParsedArguments
        do { parsed = try spec.parse(args) } catch {
            Output.err(error.description)
            return .failure(Finished(status: ExitCode.usage))
        }
        if parsed.help {
            Output.out(spec.usage ?? "usage: \(spec.command)")
            return .failure(Finished(status: ExitCode.success))
        }
        return .success(parsed)
    }

    struct Finished: Error { let status: Int32 }
}
