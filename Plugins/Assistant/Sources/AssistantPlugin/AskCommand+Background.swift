import AssistantCore
import Foundation
import Glibc
import TermhostSDK

/// `termhost ask --background`: the run goes on in the daemon after the command returned, with
/// no terminal: its answer is saved in the conversation (`assistant show`), and each call that
/// needs a yes waits there for any client (`termhost approvals`), the notification hook told.
extension AskCommand {
    func background(_ question: String, conversation: String, store: RunStore, setup: RunSetup, mode: RunEngine.Mode,
                    targetHost: String?, json: Bool) -> Int32 {
        // Its own descriptors: the client's go when the command returns.
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else {
            invocation.printError("termhost: ask: cannot open /dev/null: \(String(cString: strerror(errno)))")
            return 1
        }
        let detached = CommandInvocation(detached: "ask", arguments: invocation.arguments, stdinFD: null, stdoutFD: null, stderrFD: null)
        var session = RunSession(host: host, invocation: detached, store: store, provider: setup.provider,
                                 providerName: setup.providerName, mode: mode, targetHost: targetHost, access: setup.access)
        session.background = true
        let log = host, clock = setup.clock
        // Stopped with the daemon (ActiveRuns, as every run); saved as stopped then.
        Thread.detachNewThread { [session] in
            let printer = AnswerPrinter(invocation: detached, quiet: true, clock: clock)
            let (run, end) = session.run(question, conversation: conversation, printer: printer)
            log.log(.info, "assistant: background run \(run?.id ?? "?") in conversation \(conversation) ended: \(end.state.rawValue)"
                    + (end.reason.map { " (\(VisibleText.of($0)))" } ?? ""))
            close(null)
        }
        if json {
            invocation.print("{\"conversation\":\(JSONText.quoted(conversation)),\"background\":true}")
        } else {
            invocation.print("conversation \(conversation): the run goes on in the daemon; 'termhost approvals' answers what it asks, "
                             + "'termhost assistant show \(conversation)' shows it")
        }
        return 0
    }
}
