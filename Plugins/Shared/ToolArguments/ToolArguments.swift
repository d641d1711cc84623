import CTermhost
import Foundation
import TermhostSDK

/// A tool call's arguments: the JSON object the host already checked against the schema, read
/// again here because numbers are range-checked where they enter. Shared by the plugins that
/// offer tools (static code each links, like SSHCrypto), so the rules of reading them live once;
/// it is not in the SDK because the SDK keeps off Foundation.
public struct ToolArguments {
    public let tool: String
    public let values: [String: Any]

    public init(_ json: String, tool: String) throws(PluginError) {
        self.tool = tool
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw PluginError("\(tool): the arguments are not a JSON object", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        values = object
    }

    public func invalid(_ text: String) -> PluginError {
        PluginError("\(tool): \(text)", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
    }

    public func string(_ name: String) throws(PluginError) -> String {
        guard let value = values[name] as? String else { throw invalid("'\(name)' must be a string") }
        return value
    }

    public func bool(_ name: String, default fallback: Bool) throws(PluginError) -> Bool {
        guard let value = values[name] else { return fallback }
        guard let b = value as? Bool else { throw invalid("'\(name)' must be true or false") }
        return b
    }

    public func optionalString(_ name: String) throws(PluginError) -> String? {
        guard values[name] != nil else { return nil }
        return try string(name)
    }

    public func integer(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(PluginError) -> Int {
        guard let value = values[name] else { return fallback }
        guard let number = value as? NSNumber, let exact = Int(exactly: number.doubleValue) else {
            throw invalid("'\(name)' must be an integer")
        }
        do throws(NumberOutOfRange) { return try BoundedNumber.check(exact, name: name, in: range) } catch {
            throw invalid(error.description)
        }
    }
}
