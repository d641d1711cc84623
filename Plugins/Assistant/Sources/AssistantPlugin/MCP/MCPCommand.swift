import AssistantCore
import Foundation
import TermhostSDK

/// `termhost mcp [--planning]`: the tool catalog for outside agents (Claude Code, Codex, any MCP
/// client) over stdio. Standard output carries JSON-RPC only; warnings go to standard error.
/// It ends at the end of input or on SIGTERM (termhost.cancel/1), cancelling the running calls
/// and waiting for them within the host's 3 s bound; exit status 0.
struct MCPCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    static let arguments = CommandArguments("termhost mcp", usage: "usage: " + AssistantUsage.mcp,
                                            options: [.flag("--planning")], maxArguments: 0)
    /// How long the end waits for cancelled calls; the host allows 3 s for the whole command.
    static let endWait = 2.0

    func run() -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(with: Self.arguments) } catch { return error.status }
        // The client may close its end first: the write then fails with EPIPE (the host never
        // lets SIGPIPE end the process, ABI.md) and what runs is cancelled.
        let tools = ToolService(host: host, scene: invocation.scene)
        let catalog: [RunTool]
        do { catalog = try tools?.catalog() ?? [] } catch {
            invocation.printError("termhost mcp: cannot read the tool catalog: \(error)")
            return 1
        }
        guard let store = host.store else {
            invocation.printError("termhost mcp: the host store is unavailable (it keeps the audit log)")
            return 1
        }
        let gate = CallApproval.gate(store: store, catalog: catalog)
        switch gate {
        case .success(let g):
            (g.policy.warnings + g.policy.undercutDenies(hostTools: CallApproval.hostTools(catalog))).forEach { invocation.printError("warning: \($0)") }
        case .failure(let problem): invocation.printError("termhost mcp: every tool call will be refused: \(problem.message)")
        }
        let errorOut = invocation
        let server = MCPServer(output: MCPOutput(fd: invocation.stdoutFD), tools: tools, catalog: catalog, gate: gate,
                               mode: parsed.has("--planning") ? .planning : .acting,
                               runID: "mcp-" + String(UInt32.random(in: 0...UInt32.max), radix: 16),
                               version: AssistantFeature.info.version, log: { errorOut.printError($0) })
        var wake: [Int32] = [-1, -1]
        guard pipe(&wake) == 0 else {
            invocation.printError("termhost mcp: pipe: \(String(cString: strerror(errno)))")
            return 1
        }
        defer { close(wake[0]); close(wake[1]) }
        let wakeWriter = wake[1]
        let registration = try? host.cancellation?.onCancel(scene: invocation.scene) { _ in
            var byte: UInt8 = 1
            _ = write(wakeWriter, &byte, 1)
        }
        defer { registration?.remove() }
        read(into: server, wake: wake[0])
        server.shutdown(waitingAtMost: Self.endWait)
        return 0
    }

    /// Feeds standard input to the server line by line until it ends or `wake` becomes readable.
    private func read(into server: MCPServer, wake: Int32) {
        var lines = JSONRPCLines(maxLineBytes: MCPServer.maxLineBytes)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var fds = [pollfd(fd: invocation.stdinFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 { if errno == EINTR { continue } else { return } }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(invocation.stdinFD, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR || errno == EAGAIN { continue } else { return } }
            if n == 0 {
                if let last = lines.finish() { server.handle(last) }
                return
            }
            for item in lines.feed(buffer[..<n]) { server.handle(item) }
        }
    }
}
