import Foundation
import TermhostSDK

/// What a later daemon needs to find a remote tmux session again: kept in the SSH plugin's own
/// store (collection `persistent-sessions`, never synced) from open until the session ends for
/// good. No secret is in it: a reconnect authenticates as open did. Read back, it is checked
/// like any input (the file is the user's, and may have been edited).
struct SessionRecord: Equatable {
    static let collection = "persistent-sessions"

    let id: String
    let host: String
    let user: String
    let started: Double
    let request: SessionRequest

    var json: String {
        "{\"id\":\(JSONText.quoted(id)),\"host\":\(JSONText.quoted(host)),\"user\":\(JSONText.quoted(user)),"
            + "\"started\":\(PersistentSession.timestamp(started)),\"request\":\(request.json)}"
    }

    init(id: String, host: String, user: String, started: Double, request: SessionRequest) {
        self.id = id
        self.host = host
        self.user = user
        self.started = started
        self.request = request
    }

    /// A stored record, or nil when it is not one this plugin wrote.
    init?(json bytes: [UInt8]) {
        guard bytes.count <= 64 * 1024, let o = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
              let id = o["id"] as? String, SessionRecord.isID(id),
              let host = o["host"] as? String, (1...1024).contains(host.utf8.count),
              let user = o["user"] as? String, user.utf8.count <= 256,
              let started = (o["started"] as? NSNumber)?.doubleValue, started.isFinite, started >= 0,
              let requestObject = o["request"] as? [String: Any],
              let requestData = try? JSONSerialization.data(withJSONObject: requestObject),
              let request = try? SessionRequest(json: String(decoding: requestData, as: UTF8.self)) else { return nil }
        self.init(id: id, host: host, user: user, started: started, request: request)
    }

    /// A session ID as this plugin makes them: 1 to 64 lowercase hex digits.
    static func isID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    func save(in store: Store?) throws {
        try store?.put(SessionRecord.collection, id, json)
    }

    static func remove(_ id: String, from store: Store?) {
        try? store?.remove(collection, id)
    }

    /// Every readable record; one that is not (edited by hand, from a newer version) is skipped.
    static func all(in store: Store?) -> [SessionRecord] {
        guard let rows = try? store?.list(collection) else { return [] }
        return rows.compactMap { row in SessionRecord(json: row.value).flatMap { $0.id == row.key ? $0 : nil } }
    }
}

extension SessionRequest {
    /// The request as open() takes it (and as a SessionRecord keeps it).
    var json: String {
        var fields = ["\"host\":\(JSONText.quoted(host))", "\"columns\":\(columns)", "\"rows\":\(rows)",
                      "\"term\":\(JSONText.quoted(term))"]
        if let remoteTmux { fields.append("\"remoteTmux\":\(remoteTmux)") }
        if let forwardAgent { fields.append("\"forwardAgent\":\(forwardAgent)") }
        if !jump.isEmpty { fields.append("\"jump\":[" + jump.map(JSONText.quoted).joined(separator: ",") + "]") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
