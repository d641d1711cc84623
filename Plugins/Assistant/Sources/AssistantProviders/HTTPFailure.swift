import AssistantCore
import Foundation

/// What an HTTP error response means for the retry loop: the error to report, and whether sending
/// the same request again may succeed.
struct ClassifiedFailure: Error {
    var error: ModelError
    var retryable: Bool
    var retryAfter: String?
}

enum HTTPFailure {
    /// Error codes that mean the account's money or quota ran out: waiting does not help.
    static let quotaCodes: Set = ["insufficient_quota", "enforced_spend_limit_reached", "billing_hard_limit_reached",
                                  "billing_not_active", "spend_limit_reached"]

    /// Classifies a non-2xx response from its status and error body (the OpenAI shape
    /// `{"error":{"message","type","code"}}`, Anthropic's `{"type":"error","error":{"type","message",
    /// "details":{"error_code"}}}`, or anything else: then the body's first line is the text).
    static func classify(status: Int, body: [UInt8], retryAfter: String?) -> ClassifiedFailure {
        let text = String(decoding: body, as: UTF8.self)
        var message = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        var codes: [String] = []
        if let object = try? JSONObject(parsing: text, what: "") {
            let error = object[object: "error"] ?? object
            if let m = error[string: "message"] { message = m }
            codes = [error[string: "code"], error[string: "type"], error[object: "details"]?[string: "error_code"]].compactMap { $0 }
        }
        message = String(message.prefix(500))
        let detail = "HTTP \(status)" + (message.isEmpty ? "" : ": \(message)")
        if status == 429, codes.contains(where: { quotaCodes.contains($0) || $0.contains("billing") }) {
            return ClassifiedFailure(error: ModelError(.quotaExhausted, detail + " (the account's quota or spending limit is used up; not retried)"),
                                     retryable: false)
        }
        let transient = [408, 409, 429].contains(status) || (500...599).contains(status)
        return ClassifiedFailure(error: ModelError(.http(status: status), detail), retryable: transient, retryAfter: retryAfter)
    }

    /// Mid-stream error events worth a retry when nothing was reported yet.
    static func isTransient(streamErrorType type: String) -> Bool {
        ["overloaded_error", "api_error", "rate_limit_error", "server_error", "rate_limit_exceeded"].contains(type)
    }
}
