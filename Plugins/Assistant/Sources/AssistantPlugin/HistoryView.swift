import AssistantCore
import Foundation
import TermhostSDK

/// What `history`, `show` and `ask --json` print. Everything stored came from a model or a
/// server, so text goes through VisibleText (answers keep their newlines and tabs) and JSON
/// through the JSON encoder.
enum HistoryView {
    static func time(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: seconds))
    }

    static func runObject(_ run: RunStore.Run) -> [String: Any] {
        var o = run.json
        o.removeValue(forKey: "pid")
        o.removeValue(forKey: "pidStart")
        return o
    }

    static func messageObject(_ message: ChatMessage, run: String) -> [String: Any] {
        switch message {
        case .system(let text): ["run": run, "role": "system", "text": text]
        case .user(let text): ["run": run, "role": "user", "text": text]
        case .assistant(let text, let calls):
            ["run": run, "role": "assistant", "text": text,
             "calls": calls.map { ["id": $0.id, "name": $0.name, "arguments": $0.argumentsJSON] }]
        case .toolResult(let call, let content, let isError):
            ["run": run, "role": "tool", "call": call, "text": content, "error": isError]
        }
    }

    static func encode(_ o: Any) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? Data("null".utf8), as: UTF8.self)
    }

    /// `ask --json`: the run and its conversation's messages.
    static func json(run: RunStore.Run?, conversation: String, end: RunEngine.End,
                     transcript: [(message: ChatMessage, run: String)]) -> String {
        var o: [String: Any] = ["conversation": conversation, "state": end.state.rawValue,
                                "messages": transcript.map { messageObject($0.message, run: $0.run) }]
        o["run"] = run?.id
        o["reason"] = end.reason
        if let answer = transcript.last(where: { if case .assistant = $0.message { true } else { false } }),
           case .assistant(let text, _) = answer.message { o["answer"] = text }
        return encode(o)
    }

    /// One line per run, newest first: ID, state, start, host, question.
    static func historyLines(_ runs: [RunStore.Run]) -> [String] {
        runs.sorted { $0.started > $1.started }.map { run in
            let question = VisibleText.of(String(run.question.prefix(60)))
            return "\(run.id)  \(run.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(time(run.started))  \(VisibleText.of(run.host ?? "-"))  \(question)"
        }
    }

    /// A conversation as text: each run's header, the user's questions, the answers, each tool
    /// call and how it ended.
    static func showLines(runs: [RunStore.Run], transcript: [(message: ChatMessage, run: String)]) -> [String] {
        var lines: [String] = []
        var names: [String: String] = [:]
        var current = ""
        for (message, runID) in transcript {
            if runID != current, let run = runs.first(where: { $0.id == runID }) {
                current = runID
                var header = "run \(run.id): \(run.state.rawValue), \(run.mode), started \(time(run.started))"
                if let reason = run.reason { header += " (\(VisibleText.of(reason)))" }
                lines.append(header)
            }
            switch message {
            case .system: break
            case .user(let text): lines.append("> " + AnswerPrinter.visible(text))
            case .assistant(let text, let calls):
                if !text.isEmpty { lines.append(AnswerPrinter.visible(text)) }
                for call in calls {
                    names[call.id] = call.name
                    lines.append("[call \(VisibleText.of(call.name)) \(VisibleText.of(call.argumentsJSON))]")
                }
            case .toolResult(let call, let content, let isError):
                let name = VisibleText.of(names[call] ?? call)
                lines.append("[\(isError ? "error" : "result") \(name): \(VisibleText.of(String(content.prefix(300))))\(content.count > 300 ? "..." : "")]")
            }
        }
        return lines
    }
}
