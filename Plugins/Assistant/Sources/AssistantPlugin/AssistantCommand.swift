import TermhostSDK

/// `termhost assistant`: a conversation, or `history`, `show ID`, `rm ID`.
struct AssistantCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    func run() -> Int32 {
        invocation.printError("usage:\n" + AssistantUsage.assistant)
        return 2
    }
}
