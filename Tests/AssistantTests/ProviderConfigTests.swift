@testable import AssistantProviders
import Testing

@Suite struct ProviderConfigTests {
    @Test func theStoredFormRoundTrips() throws {
        let config = ProviderConfig(name: "work", kind: .anthropic, model: "claude-sonnet-4-5", apiKeySecretID: "assistant.work",
                                    apiVersion: "2023-06-01", maxTokens: 8192)
        #expect(config.json == #"{"name":"work","kind":"anthropic","base_url":"https://api.anthropic.com/v1","model":"claude-sonnet-4-5","api_key_secret":"assistant.work","api_version":"2023-06-01","max_tokens":8192}"#)
        #expect(try ProviderConfig(json: config.json) == config)
        let local = try ProviderConfig(json: #"{"name":"ollama","kind":"openai-compatible","base_url":"http://localhost:11434/v1","model":"llama3.2:1b"}"#)
        #expect(local.apiKeySecretID == nil && local.kind == .openAICompatible)
        #expect(ProviderConfig(name: "l", kind: .openAICompatible, model: "m").baseURL == "http://127.0.0.1:8080/v1")
    }

    @Test(arguments: [
        (#"{"name":"a","kind":"gemini","model":"m"}"#,
         "provider configuration: kind 'gemini' is not one of openai-chat, openai-responses, anthropic, openai-compatible"),
        (#"{"name":"a","kind":"anthropic","model":"m","api_key":"sk-1"}"#, "provider configuration: unknown key 'api_key'"),
        (#"{"name":"a","kind":"anthropic","model":7}"#, "provider configuration: 'model' must be a string"),
        (#"{"name":"a","kind":"anthropic","model":"m","max_tokens":1.5}"#, "provider configuration: 'max_tokens' must be an integer"),
        (#"["a"]"#, "provider configuration is not a JSON object"),
    ])
    func aMalformedStoredFormIsRefusedWithTheField(_ json: String, _ message: String) {
        #expect(throws: ProviderConfigError(message: message)) { try ProviderConfig(json: json) }
    }

    @Test(arguments: [
        ("http://api.example.com/v1", "provider 'p': plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost); use https for 'api.example.com'"),
        ("http://10.0.0.5:8080/v1", "provider 'p': plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost); use https for '10.0.0.5'"),
        ("ftp://127.0.0.1/v1", "provider 'p': base_url must use https (or http to a loopback host)"),
        ("http://%31%32%37.0.0.1:8080/v1", "provider 'p': base_url's host must not be percent-encoded"),
        ("https://user:pw@api.example.com/v1", "provider 'p': base_url must not carry a user, a query or a fragment"),
        ("https://api.example.com/v1?x=1", "provider 'p': base_url must not carry a user, a query or a fragment"),
        ("https://api.example.com:0/v1", "provider 'p': base_url port must be 1 to 65535"),
        ("api.example.com/v1", "provider 'p': base_url 'api.example.com/v1' is not an absolute http or https URL"),
    ])
    func aBaseURLThatWouldLeakOrCannotWorkIsRefused(_ url: String, _ message: String) {
        #expect(throws: ProviderConfigError(message: message)) {
            try ProviderConfig(name: "p", kind: .openAIChat, baseURL: url, model: "m").validate()
        }
    }

    @Test(arguments: ["http://127.0.0.1:8080/v1", "http://127.1.2.3/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1", "https://api.openai.com/v1"])
    func httpsAnywhereAndHTTPToLoopbackAreAccepted(_ url: String) throws {
        try ProviderConfig(name: "p", kind: .openAICompatible, baseURL: url, model: "m").validate()
    }

    @Test func namesAndModelsKeepToTheirCharacterSets() throws {
        try ProviderConfig(name: "p", kind: .openAICompatible, model: "hf.co/org/Model-7B:Q4_K_M").validate()
        #expect(throws: ProviderConfigError(message: "provider 'a b': name must be 1 to 64 letters, digits, '.', '_' or '-'")) {
            try ProviderConfig(name: "a b", kind: .openAIChat, model: "m").validate()
        }
        #expect(throws: ProviderConfigError(message: "provider 'p': model must be 1 to 200 letters, digits or ._-:/@+")) {
            try ProviderConfig(name: "p", kind: .openAIChat, model: "gpt\n4").validate()
        }
        #expect(throws: ProviderConfigError(message: "provider 'p': organization must be letters, digits, '.', '_' or '-'")) {
            try ProviderConfig(name: "p", kind: .openAIChat, model: "m", organization: "org\r\nX-Injected: 1").validate()
        }
        #expect(throws: ProviderConfigError(message: "provider 'p': max_tokens must be 1 to 1000000")) {
            try ProviderConfig(name: "p", kind: .anthropic, model: "m", maxTokens: 0).validate()
        }
    }
}
