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

    static let tool = RunTool(
        name: name,
        description: "Asks the person at the terminal for a secret (a sudo or database password) and returns a handle "
            + "\"secret:…\" instead of the value. The handle works once, for the tool and host named here: pass it as "
            + "ssh_exec's stdin_secret and the value is written to the command's standard input (for sudo -S). "
            + "Refused when nobody is at a terminal.",
        inputSchemaJSON: #"{"additionalProperties":false,"properties":{"host":{"description":"the saved host the secret is for","maxLength":255,"type":"string"},"purpose":{"description":"what the secret is, as the person will read it: 'sudo password for restarting nginx'","maxLength":200,"type":"string"},"tool":{"description":"the tool that will use the handle","enum":["ssh_exec"],"type":"string"}},"required":["host","purpose","tool"],"type":"object"}"#,
        readOnly: true, parallelSafe: false)

    /// The prompt's text: what the value is for and where it goes.
    static func prompt(_ a: SecretRequestArguments) -> String {
        "The assistant asks for a secret: \(VisibleText.of(a.purpose))\n"
            + "It goes to one \(a.tool) call on host \(VisibleText.of(a.host)) and is never shown to the model. "
            + "Give nothing to refuse.\nSecret: "
    }

    /// The tool's result: the handle and what it is bound to.
    static func result(handle: String, _ a: SecretRequestArguments) -> String {
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
