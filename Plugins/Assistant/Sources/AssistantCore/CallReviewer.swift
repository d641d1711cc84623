import Foundation

/// "Approve for me": decides Ask calls instead of a person. Only a clear `approve` runs a
/// call; everything else fails closed.
public protocol CallReviewer: Sendable {
    func review(_ request: ApprovalRequest) -> ReviewVerdict
}

public enum ReviewVerdict: Sendable, Equatable {
    case approve(reason: String)
    /// The reviewer decided no: the call is refused, a person is not asked instead.
    case deny(reason: String)
    /// No decision (no answer in time, transport error, malformed or inconsistent answer): the
    /// call goes to a person when one is present, and is refused when not.
    case unavailable(reason: String)
}

/// The reviewer as a second, tool-free model call with a fixed answer schema:
/// `{"decision":"approve"|"deny","reason":"..."}` and nothing else.
///
/// Design: the answer must be exactly that one object (whitespace around it allowed). Extra
/// keys, a missing or empty reason, a tool call, text outside the object, or a stream that did
/// not finish are "inconsistent" or "malformed": unavailable, never approve. The call is bounded
/// by `timeout`; the provider is cancelled when it passes.
public struct ModelReviewer: CallReviewer {
    public let provider: any ModelProvider
    public let timeout: Duration
    /// The person's request that started the run, so the reviewer judges the call against it.
    public let task: String

    public init(provider: any ModelProvider, task: String, timeout: Duration = .seconds(60)) {
        self.provider = provider
        self.task = task
        self.timeout = timeout
    }

    /// The reviewer's instructions; fixed, so every review reads the same rules.
    public static let instructions = """
        You review one action an operations assistant wants to take on a user's server. \
        Approve it only if it is a reasonable, proportionate step towards the user's request \
        and cannot destroy data, weaken security or disrupt service beyond what the request \
        asks for. Otherwise deny it. Answer with exactly one JSON object and nothing else: \
        {"decision":"approve","reason":"..."} or {"decision":"deny","reason":"..."}, \
        where reason is one sentence.
        """

    public func review(_ request: ApprovalRequest) -> ReviewVerdict {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let message = "The user's request:\n\(task)\n\nThe action:\n\(request.text)"
        var text = ""
        var toolCalled = false
        var finished = false
        do {
            try provider.stream(system: Self.instructions, messages: [.user(message)], tools: [],
                                isCancelled: { ContinuousClock.now >= deadline }) { event in
                switch event {
                case .textDelta(let piece): if text.utf8.count < 64 * 1024 { text += piece }
                case .toolCall: toolCalled = true
                case .finished: finished = true
                }
            }
        } catch {
            if error.kind == .cancelled || ContinuousClock.now >= deadline {
                return .unavailable(reason: "the reviewer did not answer within \(timeout)")
            }
            return .unavailable(reason: "the reviewer's model request failed: \(error.message)")
        }
        if toolCalled { return .unavailable(reason: "inconsistent review: the reviewer called a tool") }
        if !finished { return .unavailable(reason: "malformed review: the answer did not finish") }
        return Self.verdict(fromAnswer: text)
    }

    /// The verdict an answer text gives; public so the rule is tested on its own.
    public static func verdict(fromAnswer text: String) -> ReviewVerdict {
        guard let data = text.data(using: .utf8),
              let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return .unavailable(reason: "malformed review: the answer is not one JSON object")
        }
        guard Set(object.keys) == ["decision", "reason"] else {
            return .unavailable(reason: "inconsistent review: expected exactly the keys decision and reason")
        }
        guard let reason = object["reason"] as? String,
              !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return .unavailable(reason: "inconsistent review: no reason given")
        }
        let bounded = String(reason.prefix(500))
        switch object["decision"] as? String {
        case "approve": return .approve(reason: bounded)
        case "deny": return .deny(reason: bounded)
        default: return .unavailable(reason: "inconsistent review: decision must be \"approve\" or \"deny\"")
        }
    }
}
