// hello-swift: the hello-c example, written in Swift with the TermhostSDK layer.
// It contributes org.termhost.examples.hello-swift with one command, `termhost hello-swift`,
// and one tool, `hello_greet` (ABI 1.3, services/tools.h).
import Foundation
import TermhostSDK

final class HelloSwift: Feature, ToolProviding {
    static let info = FeatureInfo(
        id: "org.termhost.examples.hello-swift", version: "1.0.0", displayName: "Hello (Swift)",
        summary: "An example feature written in Swift.", order: 1000,
        requiresServices: ["termhost.store/1"],
        commands: [Command("hello-swift", summary: "Greet someone from Swift and count the greetings",
                           usage: "usage: termhost hello-swift [NAME]")],
        // Listed from the manifest; the host checks each call's arguments against the schema
        // before callTool sees them, so `name` is a string of at most 100 characters if present.
        tools: [Tool("hello_greet", description: "Makes a greeting for someone, without counting it. Use it to say hello.",
                     inputSchema: #"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 100, "description": "who to greet; default: world"}}, "additionalProperties": false}"#,
                     readOnly: true, parallelSafe: true)])

    let host: PluginHost

    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard command.arguments.count <= 1 else {
            command.printError("usage: termhost hello-swift [NAME]")
            return 2
        }
        let name = command.arguments.first ?? "world"
        do {
            guard let store = host.store else { throw PluginError("the host offers no store") }
            let count = (Int(try store.getString("counters", "hello-swift") ?? "0") ?? 0) + 1
            try store.put("counters", "hello-swift", String(count))
            if command.jsonOutput {
                command.print("{\"greeting\":\"Hello, \(name)!\",\"count\":\(count)}")
            } else {
                command.print("Hello, \(name)! (greeting number \(count), from Swift)")
            }
            return 0
        } catch {
            command.printError("termhost hello-swift: \(error)")
            return 1
        }
    }

    // Any thread, concurrently (parallel-safe): it keeps no state, so nothing to lock or cancel.
    func callTool(_ call: ToolCallRequest) throws -> String {
        let arguments = try JSONSerialization.jsonObject(with: Data(call.argumentsJSON.utf8)) as? [String: Any]
        let name = arguments?["name"] as? String ?? "world"
        return "{\"greeting\":\(JSONText.quoted("Hello, \(name)!"))}"
    }

    func cancelTool(callID: UInt64) {}
}

// It uses only ABI 1.0 (the store), so it declares 1.0 and loads in any 1.x host; the manifest
// derived from this code (`termhost plugins manifest`) says "abi": "1.0".
let plugin = Plugin(id: "org.termhost.examples.hello-swift", version: "1.0.0", features: [HelloSwift.self],
                    abiMinorNeeded: 0)

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
