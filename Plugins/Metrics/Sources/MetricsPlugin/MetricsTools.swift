import CTermhost
import Foundation
import MetricsCore
import TermhostSDK

/// The Metrics plugin's tool (services/tools.h): `get_metrics`.
///
/// Design: the same snapshot `metrics show --json` prints and the snapshot service hands out
/// (SnapshotJSON: sections with their age, null for unknown values, at most 20 processes), one
/// per host. A sampler already running in this process is used as it is; otherwise one starts
/// like show's (every second, details on, kept for Samplers.showLinger after the call so a
/// following call finds it live), but connected through the transport's open_saved: saved hosts
/// only, never a prompt. A host that cannot be sampled is a snapshot in state "failed" with the
/// reason and what the user should run, not an error of the whole call.
enum MetricsTools {
    static let hostCount = 1...16
    /// How long a call waits for every host to be live with processes (or failed), s.
    static let waitSeconds = 20.0

    static let getMetrics = Tool(
        "get_metrics",
        description: "Reads server metrics of saved hosts: CPU, memory, load, network, disks, filesystems, uptime, GPUs and the top 20 processes, each section with its age; null for values the host does not report. A host that cannot be reached is reported with state \"failed\" and the reason.",
        inputSchema: """
        {"type":"object","properties":{"hosts":{"type":"array","items":{"type":"string","maxLength":255},\
        "description":"saved host IDs from list_hosts, 1 to \(hostCount.upperBound)"}},\
        "required":["hosts"],"additionalProperties":false}
        """,
        readOnly: true, parallelSafe: true)

    /// The host IDs of a call, checked: 1 to 16 names, none that reads as user@host, a port, a
    /// jump list or an option (the SSH plugin then accepts only saved ones).
    static func hosts(_ json: String) throws(PluginError) -> [String] {
        func invalid(_ text: String) -> PluginError { PluginError("get_metrics: \(text)", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT)) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let list = object["hosts"] as? [Any] else { throw invalid("'hosts' must be an array of saved host IDs") }
        guard hostCount.contains(list.count) else {
            throw invalid("'hosts' must name \(hostCount.lowerBound) to \(hostCount.upperBound) hosts, not \(list.count)")
        }
        var names: [String] = []
        for item in list {
            guard let name = item as? String, !name.isEmpty, name.utf8.count <= 255, name.utf8.first != UInt8(ascii: "-"),
                  !name.unicodeScalars.contains(where: { "@:,".unicodeScalars.contains($0) || $0.properties.isWhitespace || VisibleText.isUnsafe($0) })
            else { throw invalid("'\(VisibleText.of("\(item)"))' is not a saved host's ID (list_hosts shows them)") }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// What the user should run for a failed host, nil when waiting or retrying is all there is.
    static func advice(_ state: MonitorState, host: String) -> String? {
        guard case .failed(let failure) = state else { return nil }
        switch failure {
        case .hostKeyUnknown: return "run 'termhost ssh \(host)' on a terminal to review its host key and save it"
        case .hostKeyChanged: return "fix the host's line in known_hosts, then run 'termhost ssh \(host)' on a terminal to review the new key"
        case .authNeeded: return "save a credential: 'termhost identities add NAME --password' (or --store-key FILE) and 'termhost hosts edit \(host) --use-identity NAME', or add the key to ssh-agent"
        case .commandFailed, .unreachable: return nil
        }
    }
}

extension MetricsFeature: ToolProviding {
    func callTool(_ call: ToolCallRequest) throws(PluginError) -> String {
        guard call.tool == MetricsTools.getMetrics.name else {
            throw PluginError("the Metrics plugin has no tool '\(VisibleText.of(call.tool))'", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        let names = try MetricsTools.hosts(call.argumentsJSON)
        guard let transport = SSHTransport(host: host), transport.offersOpenExec else {
            throw PluginError("get_metrics: the SSH plugin's transport service is not available: is the SSH plugin installed and enabled?",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        return try toolCalls.run(call.callID) { (cancel) throws(PluginError) -> String in
            var config = Sampler.Config()
            config.interval = 1
            let samplers = names.map {
                Samplers.acquire($0, config: config, transport: transport, scene: 0, paused: false, details: true, unattended: true)
            }
            defer {
                for s in samplers {
                    s.observeDetails(false)
                    Samplers.release(s, linger: Samplers.showLinger)
                }
            }
            let deadline = Date().addingTimeInterval(MetricsTools.waitSeconds)
            var reports: [HostReport] = []
            for s in samplers {
                reports.append(s.wait(timeout: max(0, deadline.timeIntervalSinceNow)) { r in
                    if cancel.isCancelled { return true }
                    if case .failed = r.state { return true }
                    return r.state == .live && r.processes != nil
                })
            }
            if cancel.isCancelled { throw PluginError("get_metrics: cancelled", code: Int32(TERMHOST_ERR_CANCELLED)) }
            let now = Date().timeIntervalSince1970
            let snapshots = reports.map { r -> JSON in
                guard case .object(let members) = SnapshotJSON.render(r, now: now) else { return .null }
                return .object(members + [("advice", .str(MetricsTools.advice(r.state, host: r.host)))])
            }
            return JSON.object([("hosts", .array(snapshots))]).text
        }
    }

    func cancelTool(callID: UInt64) { toolCalls.cancel(callID) }
}
