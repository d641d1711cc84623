// A Swift plugin for the tests: `termhost swsvc <action>` exercises the TermhostSDK wrappers
// of each host service and prints what came back; ServiceClients.swift does the same for the
// services other plugins provide.
import Glibc
import Synchronization
import TermhostSDK

final class SwiftServices: Feature {
    static let info = FeatureInfo(
        id: "org.test.swift-services", version: "1.0.0", displayName: "Swift services fixture", order: 20,
        commands: [Command("swsvc", summary: "exercise the Swift SDK's service wrappers")])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        do {
            switch command.arguments.first ?? "" {
            case "transaction":
                let store = host.store!
                struct Abort: Error {}
                do {
                    try store.transaction {
                        try store.put("c", "inside", "1")
                        throw Abort()
                    }
                } catch is Abort {
                    command.print("rolled back: \(try store.getString("c", "inside") ?? "nothing")")
                }
                try store.transaction { try store.put("c", "kept", "2") }
                command.print(try store.journal(after: 0).map { "\($0.sequence) \($0.collection) \($0.key) \($0.operation)" }.joined(separator: "; "))
            case "events":
                let seen = Mutex<[String]>([])
                let sub = try host.events!.subscribe("org.test.swift") { topic, json in seen.withLock { $0.append("\(topic) \(json)") } }
                try host.events!.publish("org.test.swift", json: "{\"n\":1}")
                sub.cancel()
                try host.events!.publish("org.test.swift", json: "{\"n\":2}")
                command.print(seen.withLock { $0 }.joined(separator: "; "))
            case "commands":
                command.print(host.commands!.list().map { "\($0.name)=\($0.feature)" }.joined(separator: " "))
            case "secrets":
                let id = try host.secrets!.put(Array("swift-secret".utf8))
                command.print(String(decoding: try host.secrets!.get(id) ?? [], as: UTF8.self))
            case "choose":
                command.print("chose \(try host.interact!.choose("Pick", from: ["a", "b"], scene: command.scene))")
            case "tools":
                // HostTools (termhost.tools/1): the catalog, one call, and a call the schema refuses.
                let tools = host.tools!
                command.print(try tools.catalog())
                command.print(try tools.call(tool: "hello_greet", argumentsJSON: #"{"name":"Swift"}"#,
                                             callID: HostTools.nextCallID(), scene: command.scene))
                do {
                    _ = try tools.call(tool: "hello_greet", argumentsJSON: #"{"name":1}"#, callID: HostTools.nextCallID(), scene: command.scene)
                } catch {
                    command.print("refused (\(error.code)): \(error.message)")
                }
            case "setting":
                command.print(try host.setting(feature: Self.info.id, key: command.arguments[1]) ?? "unset")
            case "cancel":
                // Waits for Ctrl-C through termhost.cancel/1: the handler wakes it, the flag ends it.
                let cancellation = host.cancellation!
                let heard = Mutex<UInt64?>(nil)
                let wake = Mutex<Bool>(false)
                let registration = try cancellation.onCancel(scene: command.scene) { scene in
                    heard.withLock { $0 = scene }
                    wake.withLock { $0 = true }
                }
                command.print("waiting")
                while !cancellation.isCancelled(scene: command.scene) || !wake.withLock({ $0 }) { usleep(10_000) }
                registration.remove()
                command.print("cancelled in scene \(heard.withLock { $0 } == command.scene ? "of the command" : "?")")
                return 130
            default:
                command.printError("usage: termhost swsvc transaction|events|commands|secrets|choose|setting KEY|cancel")
                return 2
            }
            return 0
        } catch {
            command.printError("error: \(error)")
            return 1
        }
    }
}

let plugin = Plugin(id: "org.test.swift-services", version: "1.0.0", features: [SwiftServices.self, SwiftSSHClient.self, SwiftFilesClient.self, SwiftMetricsClient.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
