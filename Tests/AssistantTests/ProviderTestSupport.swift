import AssistantCore
import AssistantProviders
import Foundation
import Synchronization
import TestSupport

/// Runs providers against a ScriptedHTTPServer and collects what they report.
enum ProviderRun {
    /// Milliseconds instead of seconds, so retry tests do not sleep 31 s.
    static let fastRetry = RetrySchedule(delays: [0.01, 0.02, 0.04, 0.08, 0.16], retryAfterCap: 60)
    static let apiKey = "sk-test-CANARY-7f3a9c"

    static func provider(_ kind: ProviderConfig.Kind, _ server: ScriptedHTTPServer, retry: RetrySchedule = fastRetry,
                         apiKey: String? = apiKey, options: ProviderOptions? = nil) throws -> any ModelProvider {
        var options = options ?? ProviderOptions()
        options.retry = retry
        return try ProviderConfig(name: "scripted", kind: kind, baseURL: server.baseURL, model: "test-model",
                                  apiKeySecretID: "assistant.scripted").makeProvider(apiKey: apiKey, options: options)
    }

    /// The events reported and the error thrown, if any.
    static func collect(_ provider: any ModelProvider, messages: [ChatMessage] = [.user("disk on web1?")],
                        tools: [ToolSpec] = [], isCancelled: @escaping @Sendable () -> Bool = { false },
                        onEvent: (ModelEvent) -> Void = { _ in }) -> (events: [ModelEvent], error: ModelError?) {
        var events: [ModelEvent] = []
        do throws(ModelError) {
            try provider.stream(system: "You operate hosts.", messages: messages, tools: tools, isCancelled: isCancelled) {
                events.append($0)
                onEvent($0)
            }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }
}

/// A flag another thread sets, for `isCancelled`.
final class CancelFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
