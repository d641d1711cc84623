import Foundation
#if canImport(TermhostSDK)
import AssistantProviders   // LoopbackHost; the fuzz target compiles LoopbackHost.swift in instead
import TermhostSDK          // VisibleText; the fuzz target compiles VisibleText.swift in instead
#endif

// Foundation, VisibleText and LoopbackHost only, so the fuzz target compiles it as it is.

/// The setting `approvalNotify` of org.termhost.assistant (operator policy, or the user's config
/// where the policy lets users set it): how to tell the user an Ask waits in the daemon.
///
/// ```json
/// "approvalNotify": { "url": "https://ntfy.sh/my-topic", "click": "https://example/approvals",
///                     "command": "/usr/bin/notify-send", "details": false }
/// ```
struct ApprovalHook: Equatable {
    var url: String?
    var click: String?
    var command: String?
    var details = false

    static let settingKey = "approvalNotify"

    struct Invalid: Error { let message: String }

    /// The hook from the setting's JSON text; nil when unset. Checked where it enters: the
    /// error names the field and what is allowed.
    static func parse(_ text: String?) throws(Invalid) -> ApprovalHook? {
        guard let text else { return nil }
        let field = "\(settingKey) (setting of org.termhost.assistant)"
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? [String: Any] else {
            throw Invalid(message: "\(field): expected an object with url, click, command and details")
        }
        if let unknown = object.keys.sorted().first(where: { !["url", "click", "command", "details"].contains($0) }) {
            throw Invalid(message: "\(field): unknown key '\(VisibleText.of(String(unknown.prefix(80))))' (expected url, click, command, details)")
        }
        /// Typed by JSONDecoder: a string is a string, and a Bool only true or false.
        struct Raw: Decodable { var url: String?, click: String?, command: String?, details: Bool? }
        let raw: Raw
        do { raw = try JSONDecoder().decode(Raw.self, from: Data(text.utf8)) } catch {
            let key = switch error {
            case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c): c.codingPath.first?.stringValue ?? ""
            default: ""
            }
            throw Invalid(message: "\(field)\(key.isEmpty ? "" : ".\(key)"): " + (key == "details" ? "expected true or false" : "expected a string"))
        }
        let hook = ApprovalHook(url: raw.url, click: raw.click, command: raw.command, details: raw.details ?? false)
        for (key, value) in [("url", raw.url), ("click", raw.click)] {
            if let value, let problem = urlProblem(value, loopbackOnlyForHTTP: key == "url") { throw Invalid(message: "\(field).\(key): \(problem)") }
        }
        if let command = raw.command, command.utf8.first != UInt8(ascii: "/") || command.utf8.count > 4096 || !VisibleText.isPlain(command) {
            throw Invalid(message: "\(field).command: expected the absolute path of a program (it gets the title and the text as arguments)")
        }
        return hook
    }

    /// Why `s` is not a URL a notification may use, or nil. Printable ASCII (it becomes a
    /// header), http or https, and for the POST plain http only to loopback (the text would
    /// cross the network in the clear).
    static func urlProblem(_ s: String, loopbackOnlyForHTTP: Bool) -> String? {
        guard s.utf8.count <= 2048, s.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return "must be printable ASCII without spaces, at most 2048 bytes"
        }
        // The host as written: a percent-encoded one would be decoded by one reader and not by
        // another (URLComponents.host decodes; the check and libcurl must see the same name).
        guard let url = URLComponents(string: s), let scheme = url.scheme?.lowercased(), let host = url.percentEncodedHost, !host.isEmpty,
              scheme == "https" || scheme == "http" else {
            return "'\(s)' is not an absolute http or https URL"
        }
        if host.contains("%") { return "its host must not be percent-encoded" }
        if loopbackOnlyForHTTP && scheme == "http" && !LoopbackHost.contains(host) {
            return "plain http is allowed only to a loopback host; use https for '\(VisibleText.of(host))'"
        }
        return nil
    }
}
