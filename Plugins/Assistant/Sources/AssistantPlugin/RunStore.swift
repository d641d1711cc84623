import AssistantCore
import Foundation
import TermhostSDK

/// Conversations, runs and their messages in the host store (termhost.store/1), in the
/// plugin's namespace:
///   conversations  ID -> {id, title, created, host}
///   runs           ID ("<conversation>.<n>") -> {id, conversation, state, mode, host, provider,
///                  question, started, ended, reason, pid, pidStart}
///   messages       "<conversation>/<8-digit sequence>" -> one transcript entry (MessageRecord)
///
/// Design: every write is one store call or one transaction, made before the run's next step,
/// so what the store holds is what happened. A run is written `running` with the process that
/// runs it; `markInterrupted` (at plugin activation) finds runs whose process is gone, answers
/// each of their open tool calls with `outcomeUnknown` and marks them `interrupted`.
struct RunStore {
    let store: Store

    static let outcomeUnknown = "outcome unknown: the call may or may not have run (termhost stopped while it was running)"

    struct Run {
        var id: String
        var conversation: String
        var state: RunState
        var mode: String
        var host: String?
        var provider: String?
        var question: String
        var started: Double
        var ended: Double?
        var reason: String?
        var process: ProcessIdentity

        var json: [String: Any] {
            var o: [String: Any] = ["id": id, "conversation": conversation, "state": state.rawValue, "mode": mode,
                                    "question": question, "started": started,
                                    "pid": Int(process.pid), "pidStart": process.startTicks]
            o["host"] = host
            o["provider"] = provider
            o["ended"] = ended
            o["reason"] = reason
            return o
        }

        init(id: String, conversation: String, mode: String, host: String?, provider: String?, question: String) {
            self.id = id
            self.conversation = conversation
            self.state = .running
            self.mode = mode
            self.host = host
            self.provider = provider
            self.question = question
            self.started = Date().timeIntervalSince1970
            self.process = .current
        }

        init?(_ bytes: [UInt8]) {
            guard let o = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                  let id = o["id"] as? String, let conversation = o["conversation"] as? String,
                  let state = (o["state"] as? String).flatMap(RunState.init(rawValue:)) else { return nil }
            self.id = id
            self.conversation = conversation
            self.state = state
            self.mode = o["mode"] as? String ?? "planning"
            self.host = o["host"] as? String
            self.provider = o["provider"] as? String
            self.question = o["question"] as? String ?? ""
            self.started = o["started"] as? Double ?? 0
            self.ended = o["ended"] as? Double
            self.reason = o["reason"] as? String
            self.process = ProcessIdentity(pid: Int32(o["pid"] as? Int ?? 0), startTicks: (o["pidStart"] as? NSNumber)?.uint64Value ?? 0)
        }
    }

    // MARK: conversations

    func newConversation(title: String, host: String?) throws -> String {
        var id: String
        repeat { id = String(format: "%08x", UInt32.random(in: 0x1000_0000...UInt32.max)) } while try store.get("conversations", id) != nil
        var o: [String: Any] = ["id": id, "title": String(title.prefix(80)), "created": Date().timeIntervalSince1970]
        o["host"] = host
        try store.put("conversations", id, Self.data(o))
        return id
    }

    func conversationExists(_ id: String) throws -> Bool { try store.get("conversations", id) != nil }

    /// The whole transcript of a conversation, oldest first, with the run of each message.
    func transcript(_ conversation: String) throws -> [(message: ChatMessage, run: String)] {
        try store.list("messages", prefix: conversation + "/").compactMap { MessageRecord.decode($0.value) }
    }

    // MARK: runs

    func runs() throws -> [Run] {
        try store.list("runs").compactMap { Run($0.value) }
    }

    func runs(of conversation: String) throws -> [Run] {
        try store.list("runs", prefix: conversation + ".").compactMap { Run($0.value) }.sorted { $0.started < $1.started }
    }

    /// Starts a run: its record and the user's message, in one transaction.
    func begin(conversation: String, question: String, mode: String, host: String?, provider: String?) throws -> Run {
        let number = try store.list("runs", prefix: conversation + ".").count + 1
        let run = Run(id: "\(conversation).\(number)", conversation: conversation, mode: mode, host: host,
                      provider: provider, question: question)
        try store.transaction {
            try store.put("runs", run.id, Self.data(run.json))
            try append(.user(question), run: run, turn: 0)
        }
        return run
    }

    func append(_ message: ChatMessage, run: Run, turn: Int) throws {
        let next = try store.list("messages", prefix: run.conversation + "/").count
        try store.put("messages", "\(run.conversation)/" + String(format: "%08d", next),
                      MessageRecord.encode(message, run: run.id, turn: turn))
    }

    func end(_ run: Run, _ end: RunEngine.End) throws {
        var run = run
        run.state = end.state
        run.ended = Date().timeIntervalSince1970
        run.reason = end.reason
        try store.put("runs", run.id, Self.data(run.json))
    }

    /// Runs left `running` by a process that is gone: each open tool call answered with
    /// `outcomeUnknown`, the run marked interrupted. Never resumed. Returns their IDs.
    @discardableResult
    func markInterrupted() throws -> [String] {
        var marked: [String] = []
        for var run in try runs() where run.state == .running && !run.process.isAlive {
            try store.transaction {
                let transcript = try transcript(run.conversation).map(\.message)
                for call in transcript.unansweredToolCalls {
                    try append(.toolResult(callID: call.id, content: Self.outcomeUnknown, isError: true), run: run, turn: -1)
                }
                run.state = .interrupted
                run.reason = "the process running it (PID \(run.process.pid)) ended before the run did"
                run.ended = Date().timeIntervalSince1970
                try store.put("runs", run.id, Self.data(run.json))
            }
            marked.append(run.id)
        }
        return marked
    }

    /// Removes a conversation with its runs and messages; refuses while one of its runs is live.
    func remove(_ conversation: String) throws {
        let runs = try runs(of: conversation)
        if let live = runs.first(where: { $0.state == .running && $0.process.isAlive }) {
            throw PluginError("conversation \(conversation) has a run in progress (\(live.id), PID \(live.process.pid)); stop it first")
        }
        try store.transaction {
            for (key, _) in try store.list("messages", prefix: conversation + "/") { try store.remove("messages", key) }
            for run in runs { try store.remove("runs", run.id) }
            try store.remove("conversations", conversation)
        }
    }

    static func data(_ o: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? Data())
    }
}
