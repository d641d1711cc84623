import AssistantCore
import AssistantProviders
import Foundation
import TermhostSDK

/// `termhost assistant provider add|list|rm|test`: the model endpoints runs may use.
struct ProviderCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    static let usage = """
        usage: termhost assistant provider add NAME --kind KIND --model MODEL [--url BASE_URL] [--api-key-env VAR]
               termhost assistant provider list [--json]
               termhost assistant provider rm NAME
               termhost assistant provider test [NAME]
          KIND: \(ProviderConfig.Kind.allCases.map(\.rawValue).joined(separator: ", "))
          The API key is read from the environment variable VAR, or asked for (not echoed) when a
          terminal is present; it is kept in the secrets store, never in the provider's record.
        """
    static let addArguments = CommandArguments("termhost assistant provider add", usage: usage,
                                               options: [.value("--kind"), .value("--model"), .value("--url"), .value("--api-key-env"),
                                                         .value("--organization"), .value("--api-version"), .value("--max-tokens")],
                                               maxArguments: 1)
    static let listArguments = CommandArguments("termhost assistant provider list", usage: usage, options: [.flag("--json")], maxArguments: 0)
    static let nameArguments = CommandArguments("termhost assistant provider", usage: usage, maxArguments: 1)

    func run(_ arguments: ArraySlice<String>) -> Int32 {
        guard let store = host.store else {
            invocation.printError("termhost: assistant provider: the host store is unavailable")
            return 1
        }
        let rest = arguments.dropFirst()
        switch arguments.first {
        case "add": return add(store, rest)
        case "list": return list(store, rest)
        case "rm": return remove(store, rest)
        case "test": return test(rest)
        default:
            invocation.printError(Self.usage)
            return 2
        }
    }

    private func fail(_ message: String) -> Int32 {
        invocation.printError("termhost: assistant provider: \(message)")
        return 1
    }

    private func add(_ store: Store, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.addArguments) } catch { return error.status }
        guard let name = parsed.arguments.first, let kindName = parsed.value("--kind"), let model = parsed.value("--model") else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost assistant provider add", problem: "NAME, --kind and --model are required", usage: Self.usage))
        }
        guard let kind = ProviderConfig.Kind(rawValue: kindName) else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost assistant provider add",
                problem: "--kind must be one of \(ProviderConfig.Kind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(VisibleText.of(kindName))'"))
        }
        let maxTokens: Int?
        do { maxTokens = try parsed.integer("--max-tokens", in: 1...1_000_000) } catch { return invocation.reportUsageError(error) }
        var config = ProviderConfig(name: name, kind: kind, baseURL: parsed.value("--url"), model: model,
                                    organization: parsed.value("--organization"), apiVersion: parsed.value("--api-version"), maxTokens: maxTokens)
        do { try config.validate() } catch { return fail(error.message) }
        do {
            if let key = try apiKey(parsed, kind: kind) {
                guard let secrets = host.secrets else { return fail("the secrets store is unavailable; the API key cannot be kept") }
                config.apiKeySecretID = try secrets.put(Array(key.utf8))
            }
            if let old = try store.getString(ProviderChoice.collection, name).flatMap({ try? ProviderConfig(json: $0) }),
               let oldKey = old.apiKeySecretID {
                try? host.secrets?.remove(oldKey)
            }
            try store.put(ProviderChoice.collection, name, config.json)
        } catch {
            return fail("\(error)")
        }
        invocation.print("saved provider \(name) (\(kind.rawValue), \(VisibleText.of(config.baseURL)), model \(VisibleText.of(model)))")
        return 0
    }

    /// The key from `--api-key-env`, else asked for on a terminal; none for a local server.
    private func apiKey(_ parsed: ParsedArguments, kind: ProviderConfig.Kind) throws -> String? {
        if let variable = parsed.value("--api-key-env") {
            // The caller's shell's variable (in the daemon, the client's environment).
            guard let value = host.variable(variable, scene: invocation.scene), !value.isEmpty else {
                throw PluginError("the environment variable \(VisibleText.of(variable)) is not set")
            }
            return value
        }
        guard kind != .openAICompatible else { return nil }
        guard let interact = host.interact, interact.canPrompt(scene: invocation.scene) else {
            throw PluginError("\(kind.rawValue) needs an API key: pass --api-key-env VAR, or run this from a terminal to be asked for it")
        }
        let key = try interact.prompt("API key for \(kind.rawValue): ", scene: invocation.scene, echo: false)
        return key.isEmpty ? nil : key
    }

    private func list(_ store: Store, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.listArguments) } catch { return error.status }
        do {
            let configs = try ProviderChoice.all(store)
            if invocation.jsonOutput || parsed.has("--json") {
                invocation.print("[" + configs.map(\.json).joined(separator: ",") + "]")
            } else {
                for c in configs {
                    invocation.print("\(c.name)  \(c.kind.rawValue)  \(VisibleText.of(c.baseURL))  \(VisibleText.of(c.model))\(c.apiKeySecretID == nil ? "" : "  (API key saved)")")
                }
            }
            return 0
        } catch {
            return fail("\(error)")
        }
    }

    private func remove(_ store: Store, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.nameArguments) } catch { return error.status }
        guard let name = parsed.arguments.first else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost assistant provider rm", problem: "NAME is required", usage: Self.usage))
        }
        do {
            guard let json = try store.getString(ProviderChoice.collection, name) else { return fail("no provider named '\(VisibleText.of(name))'") }
            if let id = (try? ProviderConfig(json: json))?.apiKeySecretID { try? host.secrets?.remove(id) }
            try store.remove(ProviderChoice.collection, name)
            invocation.print("removed provider \(name)")
            return 0
        } catch {
            return fail("\(error)")
        }
    }

    /// One small request without tools: says whether the endpoint answers, and with what.
    private func test(_ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.nameArguments) } catch { return error.status }
        do {
            let chosen = try ProviderChoice.resolve(parsed.arguments.first, host: host)
            var answer = ""
            let cancellation = host.cancellation
            let scene = invocation.scene
            try chosen.provider.stream(system: "Answer in one word.", messages: [.user("Say OK.")], tools: [],
                                       isCancelled: { cancellation?.isCancelled(scene: scene) ?? false }) { event in
                if case .textDelta(let piece) = event { answer += piece }
            }
            invocation.print("provider \(chosen.name) answered: \(VisibleText.of(String(answer.prefix(200))))")
            return 0
        } catch let error as ModelError {
            return fail("test failed: \(VisibleText.of(error.message))")
        } catch {
            return fail("\(error)")
        }
    }
}
