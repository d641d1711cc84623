import AssistantCore
import TermhostSDK

/// What `ask` and `assistant` both resolve before a run: the model provider (with the clock that
/// marks its first byte, for the latency figure) and the run's access options. Each failure is
/// reported here, once, naming the command.
struct RunSetup {
    /// Why there is no setup: already reported; `status` is the command's exit status.
    struct Failed: Error { let status: Int32 }

    let provider: any ModelProvider
    let providerName: String
    let clock: FirstByteClock
    let access: RunAccess

    static func resolve(_ parsed: ParsedArguments, host: PluginHost, invocation: CommandInvocation,
                        command: String) throws(Failed) -> RunSetup {
        let clock = FirstByteClock()
        let chosen: (provider: any ModelProvider, name: String)
        do { chosen = try ProviderChoice.resolve(parsed.value("--provider"), host: host, onFirstByte: clock.mark) } catch {
            invocation.printError("termhost: \(command): \(error)")
            throw Failed(status: 1)
        }
        let access: RunAccess
        do { access = try RunAccess(parsed, host: host) } catch let usage as CommandUsageError {
            throw Failed(status: invocation.reportUsageError(usage))
        } catch {
            invocation.printError("termhost: \(command): --reviewer: \(error)")
            throw Failed(status: 1)
        }
        return RunSetup(provider: chosen.provider, providerName: chosen.name, clock: clock, access: access)
    }
}
