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
           termhost identities restore NAME [--version N]   (from the sync vault; its key or
                                 password stays on the device that stored it)
    Use one with: termhost hosts add|edit HOST ... --use-identity NAME
    """

    static func run(_ c: CommandInvocation, vault: Vault, host: PluginHost) -> Int32 {
        var args = c.arguments[...]
        guard let sub = args.popFirst() else { c.printError(usage); return 2 }
        do {
            switch sub {
            case "add", "edit":
                let command = "termhost identities \(sub)"
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                let existing = try vault.identity(name)
                if sub == "add" && existing != nil {
                    c.printError("termhost identities add: an identity named '\(VisibleText.of(name))' exists; change it with 'termhost identities edit \(name) ...'")
                    return 1
                }
                if sub == "edit" && existing == nil { c.printError("termhost identities: no saved identity '\(VisibleText.of(name))'"); return 1 }
                if sub == "add", let why = HostRules.name(name) { c.printError("\(command): NAME '\(VisibleText.of(name))': \(why)"); return 2 }
                var identity = existing ?? IdentityRecord(name: name, user: nil, keyFile: nil, passwordSecret: nil)
                var askPassword = false
                var keyBytes: [UInt8]? = nil
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: changeArguments(command)) } catch { return error.status }
                for given in parsed.occurrences {
                    if given.option == "--password" { askPassword = true; continue }
                    let value = given.value ?? ""
                    if let why = given.option == "--user" ? HostRules.user(value) : HostRules.path(value) {
                        c.printError("\(command): \(given.option) '\(VisibleText.of(value))': \(why)")
                        return 2
                    }
                    switch given.option {
                    case "--user": identity.user = value
                    case "--key": identity.keyFile = value
                    default:
                        // A relative path is the caller's (in the daemon: the client's directory).
                        let file = value.hasPrefix("/") ? value : host.workingDirectory(scene: c.scene) + "/" + value
                        guard let bytes = FileManager.default.contents(atPath: file) else {
                            c.printError("\(command): cannot read the key \(VisibleText.of(value))")
                            return 1
                        }
                        keyBytes = [UInt8](bytes)
                        identity.keyFile = nil
                    }
                }
                var password: [UInt8]? = nil
                defer { if let count = password?.count { password = [UInt8](repeating: 0, count: count) } }
                if askPassword {
                    guard let interact = host.interact else { c.printError("termhost identities: no secrets service"); return 1 }
                    password = Array(try interact.prompt("Password for identity '\(VisibleText.of(name))': ", scene: c.scene, echo: false).utf8)
                }
                let change = IdentityChange(vault: vault, secrets: host.secrets)
                do {
                    identity = try change.save(identity, key: keyBytes, password: password, replacing: existing)
                } catch {
                    c.printError("\(command): nothing changed: \(error)\(existing == nil ? "" : "; '\(VisibleText.of(name))' is as it was")")
                    return 1
                }
                for warning in change.warnings { c.printError("warning: \(warning)") }
                let kept = [identity.keySecret == nil ? nil : "key", identity.passwordSecret == nil ? nil : "password"].compactMap { $0 }
                c.print("Saved identity '\(name)'\(kept.isEmpty ? "" : " (\(kept.joined(separator: " and ")) kept in the secrets store)").")
            case "list":
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: listArguments) } catch { return error.status }
                let all = try vault.identities()
                if c.jsonOutput || parsed.has("--json") { c.print(HostsCommand.json(all.map(Shown.init))); return 0 }
                if all.isEmpty { c.print("No saved identities. Add one with 'termhost identities add NAME --user USER'."); return 0 }
                for i in all { c.print(VisibleText.of("\(i.name)  \(Shown(i).summary)")) }
            case "show":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard let i = try vault.identity(name) else { c.printError("termhost identities: no saved identity '\(VisibleText.of(name))'"); return 1 }
                c.print(HostsCommand.json(Shown(i)))
            case "restore":
                return SyncedRecordRestore.run(c, Array(args), commands: host.commands, namespace: SSHFeature.info.id, collection: "identities",
                                               command: "termhost identities restore")
            case "rm":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard let i = try vault.identity(name) else { c.printError("termhost identities: no saved identity '\(VisibleText.of(name))'"); return 1 }
                let change = IdentityChange(vault: vault, secrets: host.secrets)
                do { try change.remove(i) } catch {
                    c.printError("termhost identities rm: nothing changed: \(error); '\(VisibleText.of(name))' is as it was")
                    return 1
                }
                for warning in change.warnings { c.printError("warning: \(warning)") }
                c.print("Removed identity '\(VisibleText.of(name))'.")
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

    /// The options of `identities add|edit`.
    static func changeArguments(_ command: String) -> CommandArguments {
        CommandArguments(command, usage: usage, options: [.value("--user"), .value("--key"), .value("--store-key"), .flag("--password")],
                         maxArguments: 0)
    }

    static let listArguments = CommandArguments("termhost identities list", usage: usage, options: [.flag("--json")], maxArguments: 0)

    /// What is shown of an identity: whether a password is saved, never the secret's ID.
    struct Shown: Encodable {
        let name: String
        let user: String?
        let keyFile: String?
        let hasPassword: Bool
        let hasStoredKey: Bool
        /// Stored on another device and not here (stored secrets never sync).
        let keyElsewhere: Bool
        let passwordElsewhere: Bool
        init(_ i: IdentityRecord) {
            name = i.name
            user = i.user
            keyFile = i.keyFile
            hasPassword = i.passwordSecret != nil
            hasStoredKey = i.keySecret != nil
            keyElsewhere = i.storedKey == true && i.keySecret == nil
            passwordElsewhere = i.storedPassword == true && i.passwordSecret == nil
        }
        var summary: String {
            [user.map { "user \($0)" }, keyFile.map { "key \($0)" }, hasStoredKey ? "key stored" : nil, hasPassword ? "password saved" : nil,
             keyElsewhere ? "key stored on another device, not here" : nil, passwordElsewhere ? "password saved on another device, not here" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        }
    }
}
