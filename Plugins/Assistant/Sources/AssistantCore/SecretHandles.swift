import Synchronization
import TermhostSDK

/// Where secret values wait between the prompt that read them and the tool that uses them: the
/// host's secrets service (a 0600 file apart from the store), never the store or a transcript.
public protocol SecretVault: Sendable {
    /// Saves `value` and returns its ID.
    func put(_ value: [UInt8]) throws -> String
    /// The value, or nil when the ID is unknown.
    func get(_ id: String) throws -> [UInt8]?
    func remove(_ id: String) throws
}

/// Secrets the model asks the user for (a sudo password, a database password), as handles.
///
/// Design: the person types the value at a prompt that does not echo; the value goes into the
/// vault and the model receives only a handle, `secret:` and 32 hex digits, bound to one run,
/// one tool, one host and a purpose. The model puts the handle in a tool's arguments; just
/// before that tool runs, `substitute` swaps in the value for the tool's eyes only (the
/// transcript, the audit log and the store keep the handle). A handle works once, for the run,
/// tool and host it was made for; it is then gone from the vault. The value stays in memory
/// for the rest of the run so the `Redactor` can blank it out of the tool's output.
public final class SecretHandles: Sendable {
    public struct Binding: Sendable, Equatable {
        public var runID: String
        public var tool: String
        public var host: String
        /// What the value is for, as the person was told ("sudo password on web-2").
        public var purpose: String

        public init(runID: String, tool: String, host: String, purpose: String) {
            self.runID = runID
            self.tool = tool
            self.host = host
            self.purpose = purpose
        }
    }

    public enum HandleError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Unknown, already used, or made for another run, tool or host. The text is for the
        /// model and never contains a value.
        case refused(String)
        case vault(String)

        public var description: String {
            switch self {
            case .refused(let text), .vault(let text): text
            }
        }
    }

    public static let prefix = "secret:"
    private struct Entry { var binding: Binding; var vaultID: String }
    private let vault: any SecretVault
    private let state = Mutex((pending: [String: Entry](), revealed: [String]()))

    public init(vault: any SecretVault) { self.vault = vault }

    /// Stores a value the person typed and returns the handle to give the model.
    public func issue(_ value: [UInt8], for binding: Binding) throws(HandleError) -> String {
        let id: String
        do { id = try vault.put(value) } catch { throw .vault("cannot store the secret: \(error)") }
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<2).map { _ -> String in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        let handle = Self.prefix + digits
        state.withLock { $0.pending[handle] = Entry(binding: binding, vaultID: id) }
        return handle
    }

    /// `argumentsJSON` with every handle replaced by its value (JSON-escaped, since a handle
    /// stands inside a JSON string), for the tool's execution only. Every handle in it must be
    /// pending and bound to this run, tool and host; each is consumed, even when a later one
    /// is refused, so a handle never works twice.
    public func substitute(in argumentsJSON: String, runID: String, tool: String, host: String) throws(HandleError) -> String {
        let handles = Self.handles(in: argumentsJSON)
        guard !handles.isEmpty else { return argumentsJSON }
        let entries = state.withLock { s in handles.map { s.pending.removeValue(forKey: $0) } }
        var out = argumentsJSON
        var values: [String] = []
        defer { for case let entry? in entries { try? vault.remove(entry.vaultID) } }
        for (handle, entry) in zip(handles, entries) {
            guard let entry else { throw .refused("secret handle \(handle) is unknown or was already used; ask the user again") }
            let b = entry.binding
            guard b.runID == runID, b.tool == tool, b.host == host else {
                throw .refused("secret handle \(handle) was given for \(b.tool) on \(b.host) (\(b.purpose)), not for \(tool) on \(host); ask the user again")
            }
            let bytes: [UInt8]?
            do { bytes = try vault.get(entry.vaultID) } catch { throw .vault("cannot read the secret: \(error)") }
            guard let bytes, let value = String(validating: bytes, as: UTF8.self) else {
                throw .refused("secret handle \(handle) has no value; ask the user again")
            }
            values.append(value)
            let quoted = JSONText.quoted(value)
            out = out.replacing(handle, with: String(quoted.dropFirst().dropLast()))
        }
        state.withLock { $0.revealed.append(contentsOf: values) }
        return out
    }

    /// Removes the values of handles never used from the vault; called when the run ends, so a
    /// secret the person typed does not outlive the run that asked for it.
    public func discardPending() {
        let entries = state.withLock { s in
            defer { s.pending = [:] }
            return Array(s.pending.values)
        }
        for entry in entries { try? vault.remove(entry.vaultID) }
    }

    /// The values handed to tools so far, for the run's `Redactor`.
    public var revealedValues: [String] { state.withLock { $0.revealed } }

    /// Handles in the text, in order, each once.
    static func handles(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let range = rest.firstRange(of: prefix) {
            let digits = rest[range.upperBound...].prefix(32)
            if digits.count == 32, digits.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) {
                let handle = prefix + digits
                if !found.contains(handle) { found.append(handle) }
                rest = rest[digits.endIndex...]
            } else {
                rest = rest[range.upperBound...]
            }
        }
        return found
    }
}
