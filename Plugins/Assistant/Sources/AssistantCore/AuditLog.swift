import Foundation
import Synchronization
import TermhostSDK

/// Every decision about a tool call, whoever made it (policy, full access, a remembered
/// approval, the reviewer, a person), persisted as it is made: `termhost assistant audit`.
/// A reviewer that could not decide is its own record (`unavailable`), distinct from a
/// reviewer's `refused`, so an outage is never hidden among denials.
public struct AuditLog: Sendable {
    public enum Outcome: String, Sendable, Equatable {
        case approved
        case refused
        /// The reviewer could not decide (timeout, transport, malformed or inconsistent
        /// answer); the next record says what happened instead.
        case unavailable
    }

    public struct Record: Sendable, Equatable {
        /// Seconds since 1970, UTC.
        public var time: Int64
        public var run: String
        public var tool: String
        public var host: String
        /// The command for `ssh_exec`, else the arguments, after redaction.
        public var command: String
        public var outcome: Outcome
        public var by: GateDecider
        public var reason: String

        public init(time: Int64, run: String, tool: String, host: String, command: String,
                    outcome: Outcome, by: GateDecider, reason: String) {
            self.time = time
            self.run = run
            self.tool = tool
            self.host = host
            self.command = command
            self.outcome = outcome
            self.by = by
            self.reason = reason
        }

        /// One JSON object, the stored form and the `--json` form.
        public var json: String {
            "{\"time\":\(time),\"run\":\(JSONText.quoted(run)),\"tool\":\(JSONText.quoted(tool)),"
                + "\"host\":\(JSONText.quoted(host)),\"command\":\(JSONText.quoted(command)),"
                + "\"decision\":\(JSONText.quoted(outcome.rawValue)),\"by\":\(JSONText.quoted(by.rawValue)),"
                + "\"reason\":\(JSONText.quoted(reason))}"
        }

        init?(json: String) {
            guard let f = StoredObject.fields(json), let time = (f["time"] as? NSNumber)?.int64Value,
                  let run = f["run"] as? String, let tool = f["tool"] as? String,
                  let host = f["host"] as? String, let command = f["command"] as? String,
                  let outcome = (f["decision"] as? String).flatMap(Outcome.init(rawValue:)),
                  let by = (f["by"] as? String).flatMap(GateDecider.init(rawValue:)),
                  let reason = f["reason"] as? String else { return nil }
            self.init(time: time, run: run, tool: tool, host: host, command: command,
                      outcome: outcome, by: by, reason: reason)
        }

        /// One line for a terminal; every value from outside made visible.
        public var line: String {
            let when = Date(timeIntervalSince1970: TimeInterval(time))
            let stamp = ISO8601DateFormatter().string(from: when)
            let place = host.isEmpty ? "" : " on \(VisibleText.of(host))"
            return "\(stamp) run \(VisibleText.of(run)) \(VisibleText.of(tool))\(place): "
                + "\(outcome.rawValue) by \(by.rawValue): \(VisibleText.of(command)) (\(VisibleText.of(reason)))"
        }
    }

    static let collection = "audit"
    let storage: any PolicyStorage

    public init(storage: any PolicyStorage) { self.storage = storage }

    /// Appends one record. The key sorts by the wall clock in nanoseconds, then by a sequence
    /// number shared by every log in the process (so records keep their order even when the
    /// clock does not move), then a random part (so two processes never overwrite each other).
    public func append(_ record: Record) throws {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
        let sequence = Self.sequence.add(1, ordering: .relaxed).newValue
        let key = Self.pad(nanos, 20) + "-" + Self.pad(sequence, 12) + "-"
            + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        try storage.put(Self.collection, key, record.json)
    }

    private static let sequence = Atomic<UInt64>(0)

    /// Every record, oldest first.
    public func records() throws -> [Record] {
        try storage.list(Self.collection).compactMap { Record(json: $0.value) }
    }

    static func pad(_ n: UInt64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
