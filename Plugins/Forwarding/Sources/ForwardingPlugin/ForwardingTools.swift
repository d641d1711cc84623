import CTermhost
import Foundation
import TermhostSDK

/// The Forwarding plugin's tool (services/tools.h): `forward_list`, what `termhost forward list
/// --json` shows: the saved rules and, for each, the state a running `termhost forward run`
/// reports for it ("stopped" when none runs it). Read-only: it starts and stops nothing.
enum ForwardingTools {
    /// Rules listed at most; the rest are counted.
    static let maximumRules = 500

    static let forwardList = Tool(
        "forward_list",
        description: "Lists the saved port forwarding rules (local -L, remote -R, SOCKS -D): name, saved host, bind address and port, target, the ssh-style spec, and whether a termhost forward run process is running it now, with its state.",
        inputSchema: #"{"type":"object","properties":{},"additionalProperties":false}"#,
        readOnly: true, parallelSafe: true)

    static func list(_ rules: RuleStore) throws(PluginError) -> String {
        let all: [ForwardRule], unreadable: Int
        do {
            all = try rules.all()
            unreadable = try rules.unreadable().count
            try RunDirectory.checkedIfPresent()
        } catch {
            throw PluginError("forward_list: \(error)", code: Int32(TERMHOST_ERR_IO))
        }
        let states = StatusFile.readAll()
        let shown = all.prefix(maximumRules).map { r -> String in
            let state = states[r.id]
            let bind = r.kind == .remote ? r.remoteBindHost : r.localBindHost
            return "{\"id\":\(JSONText.quoted(r.id)),\"name\":\(JSONText.quoted(r.name)),\"host\":\(JSONText.quoted(r.host)),"
                + "\"type\":\(JSONText.quoted(r.kind.rawValue)),\"bind_address\":\(JSONText.quoted(bind)),\"bind_port\":\(r.bindPort),"
                + "\"target_host\":\(r.targetHost.map(JSONText.quoted) ?? "null"),\"target_port\":\(r.targetPort.map(String.init) ?? "null"),"
                + "\"ssh\":\(JSONText.quoted(r.sshArgument)),\"running\":\(state != nil),\"state\":\(JSONText.quoted(state ?? "stopped"))}"
        }
        return "{\"rules\":[\(shown.joined(separator: ","))],\"count\":\(all.count),\"omitted\":\(all.count - shown.count),"
            + "\"unreadable\":\(unreadable)}"
    }
}

extension ForwardingFeature: ToolProviding {
    func callTool(_ call: ToolCallRequest) throws(PluginError) -> String {
        guard call.tool == ForwardingTools.forwardList.name else {
            throw PluginError("the Forwarding plugin has no tool '\(VisibleText.of(call.tool))'", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        guard let store = host.store else { throw PluginError("forward_list: the host store is unavailable", code: Int32(TERMHOST_ERR_UNSUPPORTED)) }
        return try ForwardingTools.list(RuleStore(store: store))
    }

    /// forward_list reads two small files and the store: it finishes before a cancel could help.
    func cancelTool(callID: UInt64) {}
}
