import Foundation
import TermhostSDK

/// `termhost hosts add|list|show|rm`: the vault's saved hosts.
enum HostsCommand {
    static let usage = """
    usage: termhost hosts add NAME ADDRESS [--port N] [--user USER] [--identity FILE] [--jump H1,H2]
                     [--keepalive SECONDS] [--keepalive-count N] [--use-identity NAME] [--tag TAG]...
           termhost hosts edit NAME [the same options; --port etc. replace the saved values]
           termhost hosts list [--json]
           termhost hosts show NAME [--json]
           termhost hosts rm NAME
           termhost hosts import [FILE] [--yes] [--replace]   (FILE defaults to ~/.ssh/config;
                                 saved hosts of the same name are kept unless --replace)
           termhost hosts history HOST [--json]   (sessions that authenticated, newest last)
           termhost hosts commands HOST [--json]  (commands shell integration reported, newest last)
    """

    static func run(_ c: CommandInvocation, vault: Vault) -> Int32 {
        var args = c.arguments[...]
        guard let sub = args.popFirst() else { c.printError(usage); return 2 }
        do {
            switch sub {
            case "add", "edit":
                let adding = sub == "add"
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                var record: HostRecord
                if adding {
                    guard let address = args.popFirst() else { c.printError(usage); return 2 }
                    if try vault.host(name) != nil {
                        c.printError("termhost hosts add: a host named '\(name)' exists; change it with 'termhost hosts edit \(name) ...' or remove it first")
                        return 1
                    }
                    record = HostRecord(name: name, address: address, port: 22, user: nil, identityFile: nil, tags: nil, jump: nil)
                } else {
                    guard let saved = try vault.host(name) else { c.printError("termhost hosts: no saved host '\(name)'"); return 1 }
                    record = saved
                }
                while let option = args.popFirst() {
                    guard let value = args.popFirst() else { c.printError("termhost hosts \(sub): \(option) needs a value"); return 2 }
                    switch option {
                    case "--port":
                        guard let port = Int(value), (1...65535).contains(port) else { c.printError("termhost hosts \(sub): invalid port '\(value)'"); return 2 }
                        record.port = port
                    case "--user": record.user = value
                    case "--identity": record.identityFile = value
                    case "--tag": record.tags = (record.tags ?? []) + [value]
                    case "--jump":   // an empty value clears the route
                        let hops = value.split(separator: ",").map(String.init)
                        record.jump = hops.isEmpty ? nil : hops
                    case "--address": record.address = value
                    case "--use-identity":
                        guard try vault.identity(value) != nil else { c.printError("termhost hosts: no saved identity '\(value)' (termhost identities list)"); return 1 }
                        record.identity = value
                    case "--keepalive", "--keepalive-count":
                        guard let n = Int(value), n >= 0 else { c.printError("termhost hosts \(sub): \(option) needs a number of \(option == "--keepalive" ? "seconds" : "probes")"); return 2 }
                        if option == "--keepalive" { record.keepaliveInterval = n } else { record.keepaliveCountMax = max(n, 1) }
                    default: c.printError("termhost hosts \(sub): unknown option '\(option)'\n\(usage)"); return 2
                    }
                }
                guard !name.contains("@"), !name.contains(":"), !name.isEmpty else {
                    c.printError("termhost hosts add: a host name may not contain '@' or ':' (those mean an ad-hoc destination)")
                    return 2
                }
                try vault.save(record)
                c.print("Saved host '\(name)' (\(record.user.map { "\($0)@" } ?? "")\(record.address):\(record.port)).")
            case "list":
                let hosts = try vault.all()
                if c.jsonOutput { c.print(json(hosts)); return 0 }
                if hosts.isEmpty { c.print("No saved hosts. Add one with 'termhost hosts add NAME ADDRESS'."); return 0 }
                let width = hosts.map(\.name.count).max() ?? 0
                for h in hosts {
                    var line = h.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(h.user.map { "\($0)@" } ?? "")\(h.address):\(h.port)"
                    if let jump = h.jump { line += "  via \(jump.joined(separator: ","))" }
                    if let tags = h.tags, !tags.isEmpty { line += "  [\(tags.joined(separator: ", "))]" }
                    c.print(line)
                }
            case "show":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard let h = try vault.host(name) else { c.printError("termhost hosts: no saved host '\(name)'"); return 1 }
                c.print(json(h))
            case "history":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                let rows = try ConnectionHistory(store: vault.store).rows(host: name)
                if c.jsonOutput { c.print(json(rows)); return 0 }
                if rows.isEmpty { c.print("No sessions with '\(name)' yet."); return 0 }
                let format = ISO8601DateFormatter()
                for r in rows {
                    c.print("\(format.string(from: Date(timeIntervalSince1970: r.started)))  \(r.user)  \(String(format: "%.1f", r.ended - r.started)) s  exit \(r.status)")
                }
            case "commands":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                let rows = try CommandHistory(store: vault.store).rows(host: name)
                if c.jsonOutput { c.print(json(rows)); return 0 }
                if rows.isEmpty { c.print("No commands recorded for '\(name)' (the remote shell needs shell integration: OSC 633;E)."); return 0 }
                for r in rows { c.print(r.command) }
            case "import":
                return importConfig(c, vault: vault, args: Array(args))
            case "rm":
                guard let name = args.popFirst() else { c.printError(usage); return 2 }
                guard try vault.host(name) != nil else { c.printError("termhost hosts: no saved host '\(name)'"); return 1 }
                try vault.remove(name)
                c.print("Removed host '\(name)'.")
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

    /// Shows what would be imported and what would not, then asks (or takes --yes). Without a
    /// terminal and without --yes nothing is imported (fail closed).
    static func importConfig(_ c: CommandInvocation, vault: Vault, args: [String]) -> Int32 {
        let yes = args.contains("--yes"), replace = args.contains("--replace")
        let file = args.first { !$0.hasPrefix("--") } ?? homeDirectory + "/.ssh/config"
        let config = SSHConfigImport(file: file)
        var records = config.records
        if !replace {
            let existing = records.filter { (try? vault.host($0.name)) != nil }.map(\.name)
            for name in existing { c.printError("warning: '\(name)' is already saved; kept as it is (use --replace to overwrite)") }
            records.removeAll { existing.contains($0.name) }
        }
        c.print("From \(file):")
        for r in records {
            var line = "  \(r.name): \(r.user.map { "\($0)@" } ?? "")\(r.address):\(r.port)"
            if let key = r.identityFile { line += " identity \(key)" }
            if let jump = r.jump { line += " via \(jump.joined(separator: ","))" }
            c.print(line)
        }
        if records.isEmpty { c.print(config.records.isEmpty ? "  (no concrete hosts)" : "  (every host in it is already saved)") }
        for note in config.notes { c.printError("warning: \(note)") }
        guard !records.isEmpty else { return 0 }
        if !yes {
            guard let interact = vault.interact else { return 1 }
            do {
                guard try interact.confirm("Import these \(records.count) host(s)?", scene: c.scene) else {
                    c.print("Nothing imported.")
                    return 1
                }
            } catch {
                c.printError("termhost hosts import: nothing imported: \(error) (pass --yes to import without asking)")
                return 1
            }
        }
        do {
            for r in records { try vault.save(r) }
        } catch {
            c.printError("termhost hosts import: \(error)")
            return 1
        }
        c.print("Imported \(records.count) host(s).")
        return 0
    }

    static func json<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return (try? e.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}
