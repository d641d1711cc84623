import Foundation
import TermhostSDK

/// "Yes, always": approvals remembered by command family and host, never by the raw command
/// string (the research's top complaint is re-prompting for `git status -s` after approving
/// `git status`; the opposite mistake, approving `git status && git push` by prefix, is
/// excluded because a family comes from the parsed command, and a list has none).
///
/// Each one has a short stable ID (`termhost assistant approvals rm ID`), derived from tool,
/// family and host, so remembering the same thing twice keeps one row.
public struct RememberedApprovals: Sendable {
    public struct Approval: Sendable, Equatable {
        public var id: String
        public var tool: String
        /// The command family for `ssh_exec` ("systemctl restart"); the tool name otherwise.
        public var family: String
        /// Empty for a tool without a host.
        public var host: String
        /// Seconds since 1970, UTC.
        public var created: Int64
    }

    static let collection = "approvals"
    let storage: any PolicyStorage

    public init(storage: any PolicyStorage) { self.storage = storage }

    /// The remembered approval covering this call, if any. A storage error reads as none: the
    /// call is then asked, never run unasked.
    public func match(tool: String, family: String, host: String) -> Approval? {
        let id = Self.id(tool: tool, family: family, host: host)
        return (try? list())?.first { $0.id == id && $0.tool == tool && $0.family == family && $0.host == host }
    }

    @discardableResult
    public func remember(tool: String, family: String, host: String, at created: Int64) throws -> Approval {
        let approval = Approval(id: Self.id(tool: tool, family: family, host: host), tool: tool,
                                family: family, host: host, created: created)
        let json = "{\"tool\":\(JSONText.quoted(tool)),\"family\":\(JSONText.quoted(family)),"
            + "\"host\":\(JSONText.quoted(host)),\"created\":\(created)}"
        try storage.put(Self.collection, approval.id, json)
        return approval
    }

    /// Every remembered approval, oldest first.
    public func list() throws -> [Approval] {
        try storage.list(Self.collection).compactMap { row in
            guard let f = StoredObject.fields(row.value), let tool = f["tool"] as? String,
                  let family = f["family"] as? String, let host = f["host"] as? String,
                  let created = (f["created"] as? NSNumber)?.int64Value else { return nil }
            return Approval(id: row.key, tool: tool, family: family, host: host, created: created)
        }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    /// Forgets one; false when no approval has that ID.
    public func remove(id: String) throws -> Bool {
        guard try list().contains(where: { $0.id == id }) else { return false }
        try storage.remove(Self.collection, id)
        return true
    }

    /// 12 hex digits of FNV-1a over the three fields (NUL-separated): short enough to type.
    static func id(tool: String, family: String, host: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(tool.utf8) + [0] + Array(family.utf8) + [0] + Array(host.utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String((String(repeating: "0", count: 16 - hex.count) + hex).prefix(12))
    }
}
