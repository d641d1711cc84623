import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText, JSONText; the fuzz target compiles their files in instead
#endif

/// An Ask of the assistant, as its events announce it (org.termhost.assistant.approval.pending
/// and .decided): another plugin's words, so checked here where they enter before a session
/// records them. Every field is bounded and typed; the tool and the run are shown with control
/// and invisible characters made visible; a payload out of shape is dropped, never half read.
struct ApprovalNotice: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        case pending(expiresAt: Double)
        case decided(String)
    }
    let id: Int
    let tool: String
    /// The saved host the call acts on; nil for a tool without one (no session shows it).
    let host: String?
    let run: String
    let kind: Kind

    static let pendingTopic = "org.termhost.assistant.approval.pending"
    static let decidedTopic = "org.termhost.assistant.approval.decided"
    static let decisions: Set<String> = ["allowed", "denied", "expired"]
    /// Longest tool, host and run accepted, in bytes.
    static let maxField = 256

    /// The notice in `json` for `topic`, or nil when either is not one.
    static func parse(topic: String, _ json: String) -> ApprovalNotice? {
        guard topic == pendingTopic || topic == decidedTopic, json.utf8.count <= 4096,
              let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let id = object["id"] as? NSNumber, !isBool(id), let whole = Int(exactly: id.doubleValue), whole > 0,
              let tool = field(object["tool"]), let run = field(object["run"]) else { return nil }
        let host: String?
        switch object["host"] {
        case is NSNull, nil: host = nil
        case let value: guard let named = field(value) else { return nil }; host = named
        }
        let kind: Kind
        if topic == pendingTopic {
            guard let expires = object["expiresAt"] as? NSNumber, !isBool(expires), expires.doubleValue.isFinite,
                  expires.doubleValue > 0 else { return nil }
            kind = .pending(expiresAt: expires.doubleValue)
        } else {
            guard let decision = object["decision"] as? String, decisions.contains(decision) else { return nil }
            kind = .decided(decision)
        }
        return ApprovalNotice(id: whole, tool: VisibleText.of(tool), host: host, run: VisibleText.of(run), kind: kind)
    }

    /// When a pending Ask expires (nil for a decision).
    var expiresAt: Double? {
        if case .pending(let at) = kind { return at }
        return nil
    }

    /// The event a session records for it: an object without its closing brace and "at"
    /// (PersistentSession's form).
    var eventBody: String {
        switch kind {
        case .pending(let expiresAt):
            return "{\"kind\":\"approval\",\"id\":\(id),\"tool\":\(JSONText.quoted(tool)),\"run\":\(JSONText.quoted(run)),"
                + "\"expiresAt\":\(String(format: "%.3f", expiresAt))"
        case .decided(let decision):
            return "{\"kind\":\"approval-decided\",\"id\":\(id),\"decision\":\"\(decision)\""
        }
    }

    private static func field(_ value: Any?) -> String? {
        guard let s = value as? String, !s.isEmpty, s.utf8.count <= maxField else { return nil }
        return s
    }

    private static func isBool(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }
}
