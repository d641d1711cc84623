import Foundation
import TermhostSDK

/// `termhost identities add|list|show|rm`: saved log-in identities. A password is asked for
/// with echo off and kept by the secrets service; the vault stores only its ID, and nothing
/// prints it.
enum IdentitiesCommand {
    static let usage = """
    usage: termhost identities add NAME [--user USER] [--key FILE] [--password]
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
            case "add":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                if try vault.identity(name) != nil {
                    c.printError("termhost identities add: an identity named '\(name)' exists; remove it first (termhost identities rm \(name))")
                    return 1
                }
                var identity = IdentityRecord(name: name, user: nil, keyFile: nil, passwordSecret: nil)
                var askPassword = false
                while let option = args.popFirst() {
                    switch option {
                    case "--password": askPassword = true
                    case "--user", "--key":
                        guard let value = args.popFirst() else { c.printError("termhost identities add: \(option) needs a value"); return 2 }
                        if option == "--user" { identity.user = value } else { identity.keyFile = value }
                    default: c.printError("termhost identities add: unknown option '\(option)'\n\(usage)"); return 2
                    }
                }
                if askPassword {
                    guard let interact = host.interact, let secrets = host.secrets else { c.printError("termhost identities: no secrets service"); return 1 }
                    var password = try interact.prompt("Password for identity '\(name)': ", scene: c.scene, echo: false)
                    defer { password = String(repeating: "\0", count: password.utf8.count) }
                    identity.passwordSecret = try secrets.put(Array(password.utf8))
                }
                try vault.save(identity)
                c.print("Saved identity '\(name)'\(identity.passwordSecret == nil ? "" : " (password kept in the secrets store)").")
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
                if let secret = i.passwordSecret { try? host.secrets?.remove(secret) }
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
        init(_ i: IdentityRecord) {
            name = i.name
            user = i.user
            keyFile = i.keyFile
            hasPassword = i.passwordSecret != nil
        }
        var summary: String {
            [user.map { "user \($0)" }, keyFile.map { "key \($0)" }, hasPassword ? "password saved" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        }
    }
}
