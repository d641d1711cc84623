import AssistantCore
import Foundation
import TermhostSDK

/// One configured model endpoint, as `termhost assistant provider add` stores it. The API key is
/// not here: `apiKeySecretID` names it in the secrets service, and the key itself is handed to
/// `makeProvider(apiKey:)` only when a request is made.
///
/// Stored as a small JSON object (`json`, `init(json:)`):
/// `{"name":"work","kind":"anthropic","base_url":"https://api.anthropic.com/v1","model":"claude-sonnet-4-5","api_key_secret":"assistant.work"}`
/// with optional `organization` (OpenAI), `api_version` (Anthropic's `anthropic-version`) and
/// `max_tokens` (Anthropic's required output limit).
public struct ProviderConfig: Sendable, Equatable {
    /// The wire format spoken, by its stored name.
    public enum Kind: String, Sendable, CaseIterable {
        case openAIChat = "openai-chat"             // OpenAI Chat Completions
        case openAIResponses = "openai-responses"   // OpenAI Responses
        case anthropic = "anthropic"                // Anthropic Messages
        case openAICompatible = "openai-compatible" // llama.cpp's llama-server, Ollama's /v1

        /// The base URL used when none is given.
        public var defaultBaseURL: String {
            switch self {
            case .openAIChat, .openAIResponses: "https://api.openai.com/v1"
            case .anthropic: "https://api.anthropic.com/v1"
            case .openAICompatible: "http://127.0.0.1:8080/v1"
            }
        }
    }

    public var name: String
    public var kind: Kind
    /// Up to and including the version segment ("https://api.openai.com/v1"); the format's path
    /// ("/chat/completions") is appended.
    public var baseURL: String
    public var model: String
    /// The secrets-service ID of the API key; nil for a local server that takes none.
    public var apiKeySecretID: String?
    public var organization: String?
    public var apiVersion: String?
    public var maxTokens: Int?

    public init(name: String, kind: Kind, baseURL: String? = nil, model: String, apiKeySecretID: String? = nil,
                organization: String? = nil, apiVersion: String? = nil, maxTokens: Int? = nil) {
        self.name = name
        self.kind = kind
        self.baseURL = baseURL ?? kind.defaultBaseURL
        self.model = model
        self.apiKeySecretID = apiKeySecretID
        self.organization = organization
        self.apiVersion = apiVersion
        self.maxTokens = maxTokens
    }

    /// Checks every field; the message names the field and what is allowed. Plain http is
    /// accepted only for a loopback host (127.0.0.0/8, ::1, localhost): anywhere else it would
    /// send the API key and the conversation in the clear.
    public func validate() throws(ProviderConfigError) {
        func check(_ ok: Bool, _ message: String) throws(ProviderConfigError) {
            if !ok { throw ProviderConfigError(message: "provider '\(VisibleText.of(name))': " + message) }
        }
        try check(Self.isToken(name, extra: "._-", max: 64), "name must be 1 to 64 letters, digits, '.', '_' or '-'")
        try check(Self.isToken(model, extra: "._-:/@+", max: 200), "model must be 1 to 200 letters, digits or ._-:/@+")
        if let id = apiKeySecretID { try check(Self.isToken(id, extra: "._-:/", max: 200), "api_key_secret must be 1 to 200 letters, digits or ._-:/") }
        if let organization { try check(Self.isToken(organization, extra: "._-", max: 200), "organization must be letters, digits, '.', '_' or '-'") }
        if let apiVersion { try check(Self.isToken(apiVersion, extra: "._-", max: 64), "api_version must be letters, digits, '.', '_' or '-'") }
        if let maxTokens { try check((1...1_000_000).contains(maxTokens), "max_tokens must be 1 to 1000000") }
        // The host as written: URLComponents.host decodes percent-escapes and libcurl does not,
        // so "%31%32%37.0.0.1" would pass as loopback here and be another name there.
        guard let url = URLComponents(string: baseURL), let scheme = url.scheme?.lowercased(), let host = url.percentEncodedHost, !host.isEmpty else {
            throw ProviderConfigError(message: "provider '\(VisibleText.of(name))': base_url '\(VisibleText.of(baseURL))' is not an absolute http or https URL")
        }
        try check(scheme == "https" || scheme == "http", "base_url must use https (or http to a loopback host)")
        try check(!host.contains("%"), "base_url's host must not be percent-encoded")
        try check(url.user == nil && url.password == nil && url.query == nil && url.fragment == nil,
                  "base_url must not carry a user, a query or a fragment")
        try check(!baseURL.unicodeScalars.contains { $0.value <= 0x20 || $0.value >= 0x7F }, "base_url must be printable ASCII without spaces")
        try check(url.port.map { (1...65535).contains($0) } ?? true, "base_url port must be 1 to 65535")
        try check(scheme == "https" || Self.isLoopback(host),
                  "plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost); use https for '\(VisibleText.of(host))'")
    }

    /// The endpoint for this configuration; `apiKey` is the secret `apiKeySecretID` names.
    public func makeProvider(apiKey: String?, options: ProviderOptions = ProviderOptions()) throws(ProviderConfigError) -> any ModelProvider {
        try validate()
        let wire: any WireFormat = switch kind {
        case .openAIChat: ChatCompletionsWire(model: model, organization: organization, local: false)
        case .openAICompatible: ChatCompletionsWire(model: model, organization: organization, local: true)
        case .openAIResponses: ResponsesWire(model: model, organization: organization)
        case .anthropic: AnthropicWire(model: model, version: apiVersion ?? "2023-06-01", maxTokens: maxTokens ?? 4096)
        }
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        return HTTPModelProvider(name: name, url: base + wire.path, wire: wire, apiKey: apiKey, options: options)
    }

    static func isToken(_ s: String, extra: String, max: Int) -> Bool {
        !s.isEmpty && s.utf8.count <= max && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || extra.unicodeScalars.contains($0)) }
    }

    public static func isLoopback(_ host: String) -> Bool { LoopbackHost.contains(host) }
}

/// A configuration that cannot be used; the message says which field and why.
public struct ProviderConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

extension ProviderConfig {
    /// The stored form: one JSON object, keys in a fixed order, absent options left out.
    public var json: String {
        var fields = [("name", JSONText.quoted(name)), ("kind", JSONText.quoted(kind.rawValue)),
                      ("base_url", JSONText.quoted(baseURL)), ("model", JSONText.quoted(model))]
        if let apiKeySecretID { fields.append(("api_key_secret", JSONText.quoted(apiKeySecretID))) }
        if let organization { fields.append(("organization", JSONText.quoted(organization))) }
        if let apiVersion { fields.append(("api_version", JSONText.quoted(apiVersion))) }
        if let maxTokens { fields.append(("max_tokens", String(maxTokens))) }
        return "{" + fields.map { "\(JSONText.quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Reads the stored form and validates it. Unknown keys are refused, so a typo is not
    /// silently dropped.
    public init(json: String) throws(ProviderConfigError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw ProviderConfigError(message: "provider configuration is not a JSON object")
        }
        let known: Set = ["name", "kind", "base_url", "model", "api_key_secret", "organization", "api_version", "max_tokens"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ProviderConfigError(message: "provider configuration: unknown key '\(VisibleText.of(unknown))'")
        }
        func string(_ key: String, required: Bool) throws(ProviderConfigError) -> String? {
            switch object[key] {
            case nil where !required: return nil
            case let s as String: return s
            default: throw ProviderConfigError(message: "provider configuration: '\(key)' must be a string")
            }
        }
        let kindName = try string("kind", required: true)!
        guard let kind = Kind(rawValue: kindName) else {
            throw ProviderConfigError(message: "provider configuration: kind '\(VisibleText.of(kindName))' is not one of "
                                      + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var maxTokens: Int?
        if let value = object["max_tokens"] {
            guard let number = value as? NSNumber, let n = Int(exactly: number.doubleValue) else {
                throw ProviderConfigError(message: "provider configuration: 'max_tokens' must be an integer")
            }
            maxTokens = n
        }
        self.init(name: try string("name", required: true)!, kind: kind, baseURL: try string("base_url", required: false),
                  model: try string("model", required: true)!, apiKeySecretID: try string("api_key_secret", required: false),
                  organization: try string("organization", required: false), apiVersion: try string("api_version", required: false),
                  maxTokens: maxTokens)
        try validate()
    }
}
