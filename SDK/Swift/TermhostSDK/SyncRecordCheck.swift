import Foundation

/// Helpers for a plugin's check of another device's records (`Store.declareSyncCheck`): decode
/// the record naming the field at fault, and the usual rule for a short text field. The reasons
/// never quote the record's bytes beyond a field name shown safe: they are printed by
/// `sync status`, and the record came from someone else.
public enum SyncRecordCheck {
    /// The record, or a one-line reason: "not a saved host: field 'port' is not valid ...".
    public static func decode<T: Decodable>(_ type: T.Type, _ value: [UInt8], what: String) -> Result<T, Refusal> {
        do { return .success(try JSONDecoder().decode(type, from: Data(value))) } catch let error as DecodingError {
            let (path, why): ([CodingKey], String)
            switch error {
            case .typeMismatch(_, let c), .valueNotFound(_, let c): (path, why) = (c.codingPath, "has the wrong type or is missing")
            case .keyNotFound(let k, let c): (path, why) = (c.codingPath + [k], "is missing")
            case .dataCorrupted(let c): (path, why) = (c.codingPath, "is not valid (not JSON, or a number out of range)")
            @unknown default: (path, why) = ([], "cannot be read")
            }
            let field = path.map(\.stringValue).joined(separator: ".")
            return .failure(Refusal("not \(what): \(field.isEmpty ? "the record" : "field '\(VisibleText.of(field))'") \(why)"))
        } catch {
            return .failure(Refusal("not \(what)"))
        }
    }

    /// A name, address or similar one-word value: not empty, at most `maxBytes`, no control
    /// characters or white space, not starting with '-' (it would read as an option where it
    /// is handed on). nil when it is fine, else "FIELD may not ...".
    public static func word(_ value: String, field: String, maxBytes: Int = 255) -> String? {
        if value.isEmpty { return "\(field) may not be empty" }
        if value.utf8.count > maxBytes { return "\(field) may be at most \(maxBytes) bytes long, not \(value.utf8.count)" }
        if !VisibleText.isPlain(value) { return "\(field) may not contain control characters ('\(VisibleText.of(value))')" }
        if value.unicodeScalars.contains(where: { $0.properties.isWhitespace }) { return "\(field) may not contain spaces" }
        if value.hasPrefix("-") { return "\(field) may not begin with '-'" }
        return nil
    }

    public struct Refusal: Error, Sendable {
        public let reason: String
        public init(_ reason: String) { self.reason = reason }
    }
}
