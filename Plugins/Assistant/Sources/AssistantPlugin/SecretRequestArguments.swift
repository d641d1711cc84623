import Foundation

/// `request_secret`'s arguments, from the model (untrusted): checked here, since the host's
/// schema check covers catalog tools only. Depends on Foundation alone, for its fuzz target.
struct SecretRequestArguments: Equatable {
    var host: String
    var purpose: String
    var tool: String

    /// The tools that accept a handle: `ssh_exec`'s `stdin_secret`.
    static let consumers = ["ssh_exec"]
    static let hostBytes = 1...255
    static let purposeCharacters = 1...200

    struct Refusal: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// An object with exactly these string members, each within its bounds.
    static func parse(_ json: String) -> Result<SecretRequestArguments, Refusal> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              Set(object.keys).isSubset(of: ["host", "purpose", "tool"]) else {
            return .failure(Refusal("request_secret: the arguments must be an object with host, purpose and tool only"))
        }
        guard let host = object["host"] as? String, hostBytes.contains(host.utf8.count) else {
            return .failure(Refusal("request_secret: host must be a saved host's ID (1 to 255 bytes)"))
        }
        guard let purpose = object["purpose"] as? String, purposeCharacters.contains(purpose.count) else {
            return .failure(Refusal("request_secret: purpose must be 1 to \(purposeCharacters.upperBound) characters"))
        }
        guard let tool = object["tool"] as? String, consumers.contains(tool) else {
            return .failure(Refusal("request_secret: tool must be one of \(consumers.joined(separator: ", "))"))
        }
        return .success(SecretRequestArguments(host: host, purpose: purpose, tool: tool))
    }
}
