import AssistantCore
import Foundation
import TermhostSDK

/// `request_secret`, the assistant's own tool: the model asks the person for a secret (a sudo
/// or database password) and gets a single-use handle, never the value.
///
/// Design: the person types the value at a prompt that does not echo (the interact service),
/// it goes to the secrets service, and the handle is bound to this run, the tool named and
/// the host named (SecretHandles). With nobody at a terminal the call is refused. The prompt
/// shows the model's host and purpose with control characters made visible, and says where the
/// value will go, so the person can decline by giving nothing.
enum SecretRequest {
    static let name = "request_secret"
    /// The tools that accept a handle: `ssh_exec`'s `stdin_secret`.
    static let consumers = ["ssh_exec"]
    static let purposeCharacters = 1...200

    static let tool = RunTool(
        name: name,
        description: "Asks the person at the terminal for a secret (a sudo or database password) and returns a handle "
            + "\"secret:…\" instead of the value. The handle works once, for the tool and host named here: pass it as "
            + "ssh_exec's stdin_secret and the value is written to the command's standard input (for sudo -S). "
            + "Refused when nobody is at a terminal.",
        inputSchemaJSON: #"{"additionalProperties":false,"properties":{"host":{"description":"the saved host the secret is for","maxLength":255,"type":"string"},"purpose":{"description":"what the secret is, as the person will read it: 'sudo password for restarting nginx'","maxLength":200,"type":"string"},"tool":{"description":"the tool that will use the handle","enum":["ssh_exec"],"type":"string"}},"required":["host","purpose","tool"],"type":"object"}"#,
        readOnly: true, parallelSafe: false)

    struct Arguments {
        var host: String
        var purpose: String
        var tool: String
    }

    /// The arguments, checked here since the host's schema check covers catalog tools only.
    static func arguments(_ json: String) -> Result<Arguments, RequestError> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              Set(object.keys).isSubset(of: ["host", "purpose", "tool"]) else {
            return .failure(RequestError("request_secret: the arguments must be an object with host, purpose and tool only"))
        }
        guard let host = object["host"] as? String, (1...255).contains(host.utf8.count) else {
            return .failure(RequestError("request_secret: host must be a saved host's ID (1 to 255 bytes)"))
        }
        guard let purpose = object["purpose"] as? String, purposeCharacters.contains(purpose.count) else {
            return .failure(RequestError("request_secret: purpose must be 1 to \(purposeCharacters.upperBound) characters"))
        }
        guard let tool = object["tool"] as? String, consumers.contains(tool) else {
            return .failure(RequestError("request_secret: tool must be one of \(consumers.joined(separator: ", "))"))
        }
        return .success(Arguments(host: host, purpose: purpose, tool: tool))
    }

    struct RequestError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// The prompt's text: what the value is for and where it goes.
    static func prompt(_ a: Arguments) -> String {
        "The assistant asks for a secret: \(VisibleText.of(a.purpose))\n"
            + "It goes to one \(a.tool) call on host \(VisibleText.of(a.host)) and is never shown to the model. "
            + "Give nothing to refuse.\nSecret: "
    }

    /// The tool's result: the handle and what it is bound to.
    static func result(handle: String, _ a: Arguments) -> String {
        "{\"handle\":\(JSONText.quoted(handle)),\"tool\":\(JSONText.quoted(a.tool)),\"host\":\(JSONText.quoted(a.host)),"
            + "\"purpose\":\(JSONText.quoted(a.purpose)),\"note\":\"pass the handle as stdin_secret of one \(a.tool) call on this host; it works once\"}"
    }
}

/// The secrets service as the vault of `SecretHandles`.
struct HostSecretVault: SecretVault {
    let secrets: Secrets

    func put(_ value: [UInt8]) throws -> String { try secrets.put(value) }
    func get(_ id: String) throws -> [UInt8]? { try secrets.get(id) }
    func remove(_ id: String) throws { try secrets.remove(id) }
}
