import Foundation

/// Reads a JSON file into a Decodable type, turning every failure into a `RegistryError` that
/// names the file and, for syntax errors, the line and column (Foundation reports only a
/// character offset, which is converted here).
public enum JSONDocument {
    /// Reads at most `cap` bytes of a regular file (see `BoundedFile`) and decodes them.
    public static func load<T: Decodable>(_ type: T.Type, from path: String, cap: Int) throws(RegistryError) -> T {
        try decode(type, from: BoundedFile.read(path, cap: cap), file: path)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String) throws(RegistryError) -> T {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw syntaxError(error, data: data, file: file)
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw schemaError(error, file: file)
        } catch {
            throw .invalidDocument(file: file, field: "", detail: "\(error)")
        }
    }

    static func syntaxError(_ error: any Error, data: Data, file: String) -> RegistryError {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        // "Invalid value around character 36." -> line and column of byte 36.
        var offset = data.count
        if let r = text.range(of: "character ") {
            offset = Int(text[r.upperBound...].prefix { $0.isNumber }) ?? data.count
        }
        var line = 1, column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        let detail = text.replacingOccurrences(of: #" around character \d+\.?"#, with: "",
                                               options: .regularExpression)
        return .malformedJSON(file: file, line: line, column: column, detail: detail.isEmpty ? "invalid JSON" : detail)
    }

    static func schemaError(_ error: DecodingError, file: String) -> RegistryError {
        func path(_ p: [any CodingKey]) -> String {
            p.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .typeMismatch(let t, let ctx):
            return .invalidDocument(file: file, field: path(ctx.codingPath), detail: "expected \(jsonName(t))")
        case .valueNotFound(let t, let ctx):
            return .invalidDocument(file: file, field: path(ctx.codingPath), detail: "expected \(jsonName(t)), found null")
        case .keyNotFound(let key, let ctx):
            return .invalidDocument(file: file, field: path(ctx.codingPath + [key]), detail: "missing")
        case .dataCorrupted(let ctx):
            return .invalidDocument(file: file, field: path(ctx.codingPath), detail: ctx.debugDescription)
        @unknown default:
            return .invalidDocument(file: file, field: "", detail: "\(error)")
        }
    }

    static func jsonName(_ t: Any.Type) -> String {
        switch t {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int32.Type, is Double.Type, is UInt32.Type: "a number"
        case is [Any].Type: "an array"
        default: "\(t)".hasPrefix("Array") ? "an array" : ("\(t)".hasPrefix("Dictionary") ? "an object" : "\(t)")
        }
    }

    static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        if ns.domain == NSCocoaErrorDomain {
            switch ns.code {
            case NSFileReadNoSuchFileError: return "No such file or directory"
            case NSFileReadNoPermissionError: return "Permission denied"
            default: break
            }
        }
        return ns.localizedDescription
    }
}
