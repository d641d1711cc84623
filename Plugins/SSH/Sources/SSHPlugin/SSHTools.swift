import CTermhost
import Foundation
import TermhostSDK
import ToolArguments

/// The SSH plugin's tools (services/tools.h): `list_hosts` and `ssh_exec`.
///
/// Design: a call never prompts and never takes a credential: the host argument is a saved
/// host's name, connected through UnattendedConnect. ssh_exec runs on a dedicated exec channel
/// (never a PTY) with the transport's stepped exec, so its deadline and its cancel flag are the
/// ones exec_bounded has; output is kept up to a bound per stream and the rest counted.
enum SSHTools {
    static let timeoutSeconds = 1...600
    static let defaultTimeoutSeconds = 30
    static let outputBytes = 1...131_072
    static let defaultOutputBytes = 65_536
    /// The longest command accepted (bytes): a shell line, not a script upload.
    static let commandBytes = 65_536
    /// The longest stdin_secret (bytes): a password, not a file.
    static let stdinSecretBytes = 4096
    /// Hosts listed at most; the rest are counted.
    static let maximumHosts = 500

    static let listHosts = Tool(
        "list_hosts",
        description: "Lists the saved SSH hosts: the IDs every other host tool takes, with host name, user, port, jump route and tags. Never shows a credential.",
        inputSchema: #"{"type":"object","properties":{},"additionalProperties":false}"#,
        readOnly: true, parallelSafe: true)

    static let sshExec = Tool(
        "ssh_exec",
        description: "Runs one shell command on a saved host over a dedicated exec channel (no terminal; standard input is empty, or stdin_secret's value and a newline) and returns its exit status and its stdout and stderr, each cut at max_output_bytes with the number of bytes left out. The command is ended after timeout_seconds.",
        inputSchema: """
        {"type":"object","properties":{\
        "host":{"type":"string","maxLength":255,"description":"a saved host's ID, from list_hosts"},\
        "command":{"type":"string","maxLength":\(commandBytes),"description":"the command line, run by the remote user's shell"},\
        "timeout_seconds":{"type":"integer","minimum":\(timeoutSeconds.lowerBound),"maximum":\(timeoutSeconds.upperBound),"description":"deadline for the command (default \(defaultTimeoutSeconds))"},\
        "max_output_bytes":{"type":"integer","minimum":\(outputBytes.lowerBound),"maximum":\(outputBytes.upperBound),"description":"bytes kept of stdout and of stderr each (default \(defaultOutputBytes))"},\
        "stdin_secret":{"type":"string","maxLength":\(stdinSecretBytes),"description":"a secret for the command's standard input, followed by a newline (sudo -S); the assistant takes a handle from request_secret here, never a value"}},\
        "required":["host","command"],"additionalProperties":false}
        """,
        readOnly: false, parallelSafe: false)

    static let all = [listHosts, sshExec]

    static func hosts(vault: Vault) throws(PluginError) -> String {
        let records = try vault.all().sorted { $0.name < $1.name }
        func list(_ values: [String]?) -> String {
            values.map { "[" + $0.map(JSONText.quoted).joined(separator: ",") + "]" } ?? "null"
        }
        let shown = records.prefix(maximumHosts).map { h in
            "{\"id\":\(JSONText.quoted(h.name)),\"host_name\":\(JSONText.quoted(h.address)),"
                + "\"user\":\(h.user.map(JSONText.quoted) ?? "null"),\"port\":\(h.port),"
                + "\"jump\":\(list(h.jump)),\"tags\":\(list(h.tags))}"
        }
        return "{\"hosts\":[\(shown.joined(separator: ","))],\"count\":\(records.count),\"omitted\":\(records.count - shown.count)}"
    }

    static func exec(_ arguments: ToolArguments, calls: ToolCalls, callID: UInt64, provider: TransportProvider) throws(PluginError) -> String {
        let name = try arguments.string("host")
        let command = try arguments.string("command")
        guard !command.isEmpty, command.utf8.count <= commandBytes else {
            throw PluginError("ssh_exec: command must be 1 to \(commandBytes) bytes", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        let timeout = try arguments.integer("timeout_seconds", in: timeoutSeconds, default: defaultTimeoutSeconds)
        let limit = try arguments.integer("max_output_bytes", in: outputBytes, default: defaultOutputBytes)
        // Written to stdin and never echoed in the result; the caller blanks it from the output.
        let input = arguments.values["stdin_secret"] == nil ? [] : Array((try arguments.string("stdin_secret") + "\n").utf8)
        return try calls.run(callID) { (cancel) throws(PluginError) -> String in
            // Shared: in the daemon a live connection to the host (a forwarding rule's, a
            // sampler's) takes this command as one more channel.
            let c = try UnattendedConnect.handle(name, provider: provider, shared: true)
            // In the handle table, so the feature's shutdown closes it if the call is cut short.
            let handle = TransportService.handles.insert(c)
            defer { provider.table.pointee.close(handle) }
            var out = BoundedOutput(limit: limit), errOut = BoundedOutput(limit: limit)
            var err = termhostEmptyError()
            let r = TransportService.runExec(c, command: command, input: input, deadlineMS: UInt32(timeout * 1000), cancel: cancel.pointer,
                                             output: { stream, data in
                                                 if stream == 0 { out.append(data) } else { errOut.append(data) }
                                             }, err: &err)
            guard r.status == Int32(TERMHOST_OK) else {
                var message = termhostErrorMessage(err)
                if r.status == Int32(TERMHOST_ERR_TIMEOUT) { message += " (timeout_seconds \(timeout))" }
                throw PluginError(message, code: r.status)
            }
            return result(host: name, command: command, outcome: r, stdout: out, stderr: errOut)
        }
    }

    static func result(host: String, command: String, outcome: TransportService.ExecOutcome,
                       stdout: BoundedOutput, stderr: BoundedOutput) -> String {
        var notes: [String] = []
        if stdout.omittedBytes > 0 { notes.append("stdout: \(stdout.omittedBytes) more bytes not shown") }
        if stderr.omittedBytes > 0 { notes.append("stderr: \(stderr.omittedBytes) more bytes not shown") }
        return "{\"host\":\(JSONText.quoted(host)),\"command\":\(JSONText.quoted(command)),"
            + "\"exit_status\":\(outcome.signal == nil ? String(outcome.exitStatus) : "null"),"
            + "\"signal\":\(outcome.signal.map(JSONText.quoted) ?? "null"),"
            + "\"stdout\":\(JSONText.quoted(stdout.text)),\"stdout_omitted_bytes\":\(stdout.omittedBytes),"
            + "\"stderr\":\(JSONText.quoted(stderr.text)),\"stderr_omitted_bytes\":\(stderr.omittedBytes),"
            + "\"note\":\(notes.isEmpty ? "null" : JSONText.quoted(notes.joined(separator: "; ")))}"
    }
}

extension SSHFeature: ToolProviding {
    func callTool(_ call: ToolCallRequest) throws(PluginError) -> String {
        let arguments = try ToolArguments(call.argumentsJSON, tool: call.tool)
        switch call.tool {
        case SSHTools.listHosts.name:
            guard let store = host.store else { throw PluginError("list_hosts: the host store is unavailable", code: Int32(TERMHOST_ERR_UNSUPPORTED)) }
            return try SSHTools.hosts(vault: Vault(store: store))
        case SSHTools.sshExec.name:
            return try SSHTools.exec(arguments, calls: toolCalls, callID: call.callID, provider: transport)
        default:
            throw PluginError("the SSH plugin has no tool '\(VisibleText.of(call.tool))'", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
    }

    func cancelTool(callID: UInt64) { toolCalls.cancel(callID) }
}
