import Foundation
import TermhostSDK

/// `termhost identities add|list|show|rm`: saved log-in identities. A password is asked for
/// with echo off and kept by the secrets service; the vault stores only its ID, and nothing
/// prints it.
enum IdentitiesCommand {
    static let usage = """
    usage: termhost identities add NAME [--user USER] [--key FILE | --store-key FILE] [--password]
           termhost identities edit NAME [the same options; given values replace saved ones]
           termhost identities list [--json]
           termhost identities show NAME
           termhost identities rm NAME
    Use one with: termhost hosts add|edit HOST ... --use-identity NAME
    """

    static func run(_ c: CommandInvocation, vault: Vault, host: PluginHost) -> Int32 {
        var args = c.arguments[...]
        guard let sub = args.popFirst() else { c.printError(usage); return 2 }
        do {
            switch sub {
            case "add", "edit":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                let existing = try vault.identity(name)
                if sub == "add" && existing != nil {
                    c.printError("termhost identities add: an identity named '\(name)' exists; change it with 'termhost identities edit \(name) ...'")
                    return 1
                }
                if sub == "edit" && existing == nil { c.printError("termhost identities: no saved identity '\(name)'"); return 1 }
                var identity = existing ?? IdentityRecord(name: name, user: nil, keyFile: nil, passwordSecret: nil)
                var askPassword = false
                while let option = args.popFirst() {
                    switch option {
                    case "--password": askPassword = true
                    case "--user", "--key", "--store-key":
                        guard let value = args.popFirst() else { c.printError("termhost identities \(sub): \(option) needs a value"); return 2 }
                        switch option {
                        case "--user": identity.user = value
                        case "--key": identity.keyFile = value
                        default:
                            // The key's bytes go to the secrets service; the vault keeps only the ID.
                            guard let secrets = host.secrets, let bytes = FileManager.default.contents(atPath: value) else {
                                c.printError("termhost identities \(sub): cannot read the key \(value)")
                                return 1
                            }
                            if let old = identity.keySecret { try? secrets.remove(old) }
                            identity.keySecret = try secrets.put([UInt8](bytes))
                            identity.keyFile = nil
                        }
                    default: c.printError("termhost identities \(sub): unknown option '\(option)'\n\(usage)"); return 2
                    }
                }
                if askPassword {
                    guard let interact = host.interact, let secrets = host.secrets else { c.printError("termhost identities: no secrets service"); return 1 }
                    var password = try interact.prompt("Password for identity '\(name)': ", scene: c.scene, echo: false)
                    defer { password = String(repeating: "\0", count: password.utf8.count) }
                    if let old = identity.passwordSecret { try? secrets.remove(old) }
                    identity.passwordSecret = try secrets.put(Array(password.utf8))
                }
                try vault.save(identity)
                let kept = [identity.keySecret == nil ? nil : "key", identity.passwordSecret == nil ? nil : "password"].compactMap { $0 }
                c.print("Saved identity '\(name)'\(kept.isEmpty ? "" : " (\(kept.joined(separator: " and ")) kept in the secrets store)").")
            case "list":
                let all = try vault.identities()
                if c.jsonOutput { c.print(HostsCommand.json(all.map(Shown.init))); return 0 }
                if all.isEmpty { c.print("No saved identities. Add one with 'termhost identities add NAME --user USER'."); return 0 }
                for i in all { c.print("\(i.name)  \(Shown(i).summary)") }
            case "show":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard let i = try vault.identity(name) else { c.printError("termhost identities: no saved identity '\(name)'"); return 1 }
                c.print(HostsCommand.json(Shown(i)))
            case "rm":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard let i = try vault.identity(name) else { c.printError("termhost identities: no saved identity '\(name)'"); return 1 }
                for secret in [i.passwordSecret, i.keySecret].compactMap({ $0 }) { try? host.secrets?.remove(secret) }
                try vault.removeIdentity(name)
                c.print("Removed identity '\(name)'.")
            default:
                c.printError("termhost identities: unknown subcommand '\(sub)'\n\(usage)")
                return 2
            }
            return 0
        } catch {
            c.printError("termhost identities: \(error)")
            return 1
        }
    }

    /// What is shown of an identity: whether a password is saved, never the secret's ID.
    struct Shown: Encodable {
        let name: String
        let user: String?
        let keyFile: String?
        let hasPassword: Bool
        let hasStoredKey: Bool
        init(_ i: IdentityRecord) {
            name = i.name
            user = i.user
            keyFile = i.keyFile
            hasPassword = i.passwordSecret != nil
            hasStoredKey = i.keySecret != nil
        }
        var summary: String {
            [user.map { "user \($0)" }, keyFile.map { "key \($0)" }, hasStoredKey ? "key stored" : nil, hasPassword ? "password saved" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        }
    }
}
