import Foundation
import TermhostSDK

/// `termhost hosts add|list|show|rm`: the vault's saved hosts.
enum HostsCommand {
    static let usage = """
    usage: termhost hosts add NAME ADDRESS [--port N] [--user USER] [--identity FILE] [--jump H1,H2]
                     [--keepalive SECONDS] [--keepalive-count N] [--use-identity NAME] [--tag TAG]...
                     [--forward-agent yes|no] [--remote-tmux yes|no]
                     [--send-env PATTERN]... [--set-env NAME=VALUE]...   (an empty value clears them)
                     [--certificate FILE]   (an OpenSSH certificate for the key; default FILE-cert.pub)
                     [--host-key-alias NAME]   (the host key is looked up and saved under NAME)
                     [--add-identity FILE]...   (more key files, tried after --identity's in order)
           termhost hosts edit NAME [the same options; --port etc. replace the saved values,
                     --tag adds a tag] [--untag TAG]...
           termhost hosts list [--json]
           termhost hosts show NAME [--json]
           termhost hosts rm NAME
           termhost hosts restore NAME [--version N]   (a version the sync vault holds; without
                                 --version, a deleted host's last version: 'termhost sync history hosts/NAME')
           termhost hosts import [FILE] [--yes] [--replace]   (FILE defaults to ~/.ssh/config;
                                 saved hosts of the same name are kept unless --replace)
           termhost hosts history HOST [--json]   (sessions that authenticated, newest last)
           termhost hosts commands HOST [--json]  (commands shell integration reported, newest last)
    """

    static func run(_ c: CommandInvocation, vault: Vault, commands: Commands?) -> Int32 {
        var args = c.arguments[...]
        guard let sub = args.popFirst() else { c.printError(usage); return 2 }
        do {
            switch sub {
            case "add", "edit":
                let adding = sub == "add"
                let command = "termhost hosts \(sub)"
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                var record: HostRecord
                if adding {
                    guard let address = args.popFirst() else { c.printError(usage); return 2 }
                    if let why = HostRules.name(name) { c.printError("\(command): NAME '\(VisibleText.of(name))': \(why)"); return 2 }
                    if let why = HostRules.address(address) { c.printError("\(command): ADDRESS '\(VisibleText.of(address))': \(why)"); return 2 }
                    if try vault.hostExists(name) {
                        c.printError("termhost hosts add: a host named '\(name)' exists; change it with 'termhost hosts edit \(name) ...' or remove it first")
                        return 1
                    }
                    record = HostRecord(name: name, address: address, port: 22, user: nil, identityFile: nil, tags: nil, jump: nil)
                } else {
                    guard let saved = try vault.host(name) else { c.printError("termhost hosts: no saved host '\(VisibleText.of(name))'"); return 1 }
                    record = saved
                }
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: changeArguments(command)) } catch { return error.status }
                for given in parsed.occurrences {
                    let value = given.value ?? ""
                    if given.option == "--use-identity" {
                        guard try vault.identity(value) != nil else { c.printError("termhost hosts: no saved identity '\(VisibleText.of(value))' (termhost identities list)"); return 1 }
                        record.identity = value
                    } else if let refusal = HostOption(rawValue: given.option)?.apply(value, to: &record) {
                        c.printError("\(command): \(refusal)")
                        return 2
                    }
                }
                try vault.save(record)
                c.print("Saved host '\(VisibleText.of(name))' (\(shown(record))).")
            case "list":
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: jsonArguments("list", maxArguments: 0)) } catch { return error.status }
                let hosts = try vault.all()
                if c.jsonOutput || parsed.has("--json") { c.print(json(hosts)); return 0 }
                if hosts.isEmpty { c.print("No saved hosts. Add one with 'termhost hosts add NAME ADDRESS'."); return 0 }
                let width = hosts.map { VisibleText.of($0.name).count }.max() ?? 0
                for h in hosts {
                    // Saved before values were checked on input, a name may still hold control
                    // characters: shown, never obeyed.
                    var line = VisibleText.of(h.name).padding(toLength: width, withPad: " ", startingAt: 0) + "  \(shown(h))"
                    if let jump = h.jump { line += "  via \(VisibleText.of(jump.joined(separator: ",")))" }
                    if let tags = h.tags, !tags.isEmpty { line += "  [\(VisibleText.of(tags.joined(separator: ", ")))]" }
                    c.print(line)
                }
            case "show":
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: jsonArguments("show", maxArguments: 1)) } catch { return error.status }
                guard let name = parsed.arguments.first else { c.printError(usage); return 2 }
                guard let h = try vault.host(name) else { c.printError("termhost hosts: no saved host '\(VisibleText.of(name))'"); return 1 }
                c.print(json(h))
            case "history":
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: jsonArguments("history", maxArguments: 1)) } catch { return error.status }
                guard let name = parsed.arguments.first else { c.printError(usage); return 2 }
                let rows = try ConnectionHistory(store: vault.store).rows(host: name)
                if c.jsonOutput || parsed.has("--json") { c.print(json(rows)); return 0 }
                if rows.isEmpty { c.print("No sessions with '\(name)' yet."); return 0 }
                let format = ISO8601DateFormatter()
                for r in rows {
                    c.print("\(format.string(from: Date(timeIntervalSince1970: r.started)))  \(r.user)  \(String(format: "%.1f", r.ended - r.started)) s  exit \(r.status)")
                }
            case "commands":
                let parsed: ParsedArguments
                do { parsed = try c.parse(args, with: jsonArguments("commands", maxArguments: 1)) } catch { return error.status }
                guard let name = parsed.arguments.first else { c.printError(usage); return 2 }
                let rows = try CommandHistory(store: vault.store).rows(host: name)
                if c.jsonOutput || parsed.has("--json") { c.print(json(rows)); return 0 }
                if rows.isEmpty { c.print("No commands recorded for '\(name)' (the remote shell needs shell integration: OSC 633;E)."); return 0 }
                for r in rows { c.print(r.command) }
            case "import":
                return importConfig(c, vault: vault, args: Array(args))
            case "restore":
                return SyncedRecordRestore.run(c, Array(args), commands: commands, namespace: SSHFeature.info.id, collection: "hosts",
                                               command: "termhost hosts restore")
            case "rm":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                // Existence only: a host whose value cannot be read must still be removable.
                guard try vault.hostExists(name) else { c.printError("termhost hosts: no saved host '\(VisibleText.of(name))'"); return 1 }
                try vault.remove(name)
                c.print("Removed host '\(VisibleText.of(name))'.")
            default:
                c.printError("termhost hosts: unknown subcommand '\(sub)'\n\(usage)")
                return 2
            }
            return 0
        } catch {
            c.printError("termhost hosts: \(error)")
            return 1
        }
    }

    /// The options of `hosts add|edit`: HostOption's and --use-identity, each taking a value.
    static func changeArguments(_ command: String) -> CommandArguments {
        CommandArguments(command, usage: usage,
                         options: HostOption.allCases.map { .value($0.rawValue) } + [.value("--use-identity")], maxArguments: 0)
    }

    /// The subcommands whose only option is --json.
    static func jsonArguments(_ sub: String, maxArguments: Int) -> CommandArguments {
        CommandArguments("termhost hosts \(sub)", usage: usage, options: [.flag("--json")], maxArguments: maxArguments)
    }

    static let importArguments = CommandArguments("termhost hosts import", usage: usage,
                                                  options: [.flag("--yes"), .flag("--replace")], maxArguments: 1)

    /// Shows what would be imported and what would not, then asks (or takes --yes). Without a
    /// terminal and without --yes nothing is imported (fail closed). Linear in the number of
    /// hosts: the saved names come in one query, and the hosts are saved in one transaction.
    static func importConfig(_ c: CommandInvocation, vault: Vault, args: [String]) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try c.parse(args, with: importArguments) } catch { return error.status }
        let yes = parsed.has("--yes"), replace = parsed.has("--replace")
        let file = parsed.arguments.first ?? homeDirectory + "/.ssh/config"
        let config = SSHConfigImport(file: file)
        if let refused = config.parsed.refused {
            c.printError("termhost hosts import: \(refused); nothing imported")
            return 1
        }
        let found = config.records
        var records = found
        if !replace {
            let saved: Set<String>
            do { saved = try vault.hostNames() } catch {
                c.printError("termhost hosts import: \(error)")
                return 1
            }
            for r in records where saved.contains(r.name) { c.printError("warning: '\(r.name)' is already saved; kept as it is (use --replace to overwrite)") }
            records.removeAll { saved.contains($0.name) }
        }
        let notCarried = config.notCarried
        var preview = "From \(VisibleText.of(file)):\n"
        for r in records {
            preview += "  \(r.name): \(shown(r))"
            if let key = r.identityFile { preview += " identity \(VisibleText.of(key))" }
            if let jump = r.jump { preview += " via \(VisibleText.of(jump.joined(separator: ",")))" }
            if r.forwardAgent == true { preview += " forwarding the agent" }
            if r.isTemplate { preview += " (template: for any name it matches)" }
            if let left = notCarried[r.name], !left.isEmpty { preview += "; not carried: \(left.joined(separator: ", "))" }
            preview += "\n"
        }
        if records.isEmpty { preview += found.isEmpty ? "  (no concrete hosts)\n" : "  (every host in it is already saved)\n" }
        c.print(String(preview.dropLast()))
        for note in config.parsed.warnings { c.printError("warning: \(note)") }
        for note in config.parsed.skipped { c.printError("warning: \(note)") }
        let skipped = config.parsed.skipped.isEmpty ? "" : "; \(config.parsed.skipped.count) refused (see the warnings)"
        guard !records.isEmpty else {
            if !skipped.isEmpty { c.print("Imported 0 host(s)\(skipped).") }
            return 0
        }
        if !yes {
            guard let interact = vault.interact else { return 1 }
            do {
                guard try interact.confirm("Import these \(counted(records))?", scene: c.scene) else {
                    c.print("Nothing imported.")
                    return 1
                }
            } catch {
                c.printError("termhost hosts import: nothing imported: \(error) (pass --yes to import without asking)")
                return 1
            }
        }
        do {
            try vault.save(records)
        } catch {
            c.printError("termhost hosts import: nothing imported: \(error)")
            return 1
        }
        c.print("Imported \(counted(records))\(skipped).")
        return 0
    }

    /// `user@address:port`, shown with control characters made visible (records saved by
    /// older versions were not checked).
    /// `3 host(s)`, or `3 host(s) and 1 template(s)` when wildcard patterns came too.
    static func counted(_ records: [HostRecord]) -> String {
        let templates = records.filter(\.isTemplate).count
        return "\(records.count - templates) host(s)" + (templates > 0 ? " and \(templates) template(s)" : "")
    }

    static func shown(_ r: HostRecord) -> String {
        VisibleText.of("\(r.user.map { "\($0)@" } ?? "")\(r.address):\(r.port)")
    }

    static func json<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return (try? e.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}
