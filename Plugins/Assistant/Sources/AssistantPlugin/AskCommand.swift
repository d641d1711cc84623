import TermhostSDK

/// `termhost ask`: one question, one run, the answer streamed.
struct AskCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    func run() -> Int32 {
        invocation.printError("termhost: ask: no model provider is configured; add one with 'termhost assistant provider add'")
        return 1
    }
}
