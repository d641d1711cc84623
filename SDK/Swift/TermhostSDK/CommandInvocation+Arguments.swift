/// A command's arguments read by its `CommandArguments`, with the parser's errors and `--help`
/// answered the same way by every command.
public extension CommandInvocation {
    /// `arguments` (by default all of this invocation's) as `spec` reads them. When the command
    /// is finished before it starts, throws the status it returns: 2 after writing a usage error
    /// to standard error, 0 after writing `spec.usage` to standard output for `--help`.
    ///
    ///     let parsed: ParsedArguments
    ///     do { parsed = try invocation.parse(with: spec) } catch { return error.status }
    func parse<Arguments: Collection<String>>(_ arguments: Arguments, with spec: CommandArguments)
        throws(CommandFinished) -> ParsedArguments {
        let parsed: ParsedArguments
        do { parsed = try spec.parse(arguments) } catch {
            printError(error.description)
            throw CommandFinished(status: CommandUsageError.exitStatus)
        }
        if parsed.help {
            print(spec.usage ?? "usage: \(spec.command)")
            throw CommandFinished(status: 0)
        }
        return parsed
    }

    /// All of this invocation's arguments as `spec` reads them (see `parse(_:with:)`).
    func parse(with spec: CommandArguments) throws(CommandFinished) -> ParsedArguments {
        try parse(arguments, with: spec)
    }

    /// Writes `error` (a usage error found after parsing, such as a number out of range) to
    /// standard error and returns the usage status, 2.
    func reportUsageError(_ error: CommandUsageError) -> Int32 {
        printError(error.description)
        return CommandUsageError.exitStatus
    }
}

/// The command has already answered (a usage error, or its usage for `--help`) and returns
/// `status`.
public struct CommandFinished: Error, Equatable {
    public let status: Int32

    public init(status: Int32) { self.status = status }
}
