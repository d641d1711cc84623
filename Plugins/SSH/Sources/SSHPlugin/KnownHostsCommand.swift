import Foundation
import TermhostSDK

/// `termhost known-hosts list|rm`: the host keys accepted in Termhost and synced between the
/// devices of the vault (SyncedHostKeys). Hosts are named as `ssh-keygen -F/-R` name them
/// (`host`, `[host]:port`); the records themselves hold only a host ID, so a list of every
/// record shows IDs, not names. OpenSSH's files are not touched here (`ssh-keygen -R`).
enum KnownHostsCommand {
    static let usage = """
    usage: termhost known-hosts list [HOST] [--json]   (HOST: host or [host]:port, as ssh-keygen -F)
           termhost known-hosts rm HOST                (every synced key of HOST, on every device at the next sync)
    """

    static func run(_ c: CommandInvocation, store: Store) -> Int32 {
        var args = c.arguments[...]
        guard let sub = args.popFirst() else { c.printError(usage); return 2 }
        do {
            switch sub {
            case "list":
                let parsed: ParsedArguments
                do {
                    parsed = try c.parse(Array(args), with: CommandArguments("termhost known-hosts list", usage: usage,
                                                                              options: [.flag("--json")], maxArguments: 1))
                } catch { return error.status }
                var (records, warnings) = try SyncedHostKeys.load(store)
                for w in warnings { c.printError("termhost known-hosts: \(w)") }
                if let name = parsed.arguments.first {
                    let (host, port) = split(name)
                    let id = SyncedHostKeys.hostID(host: host, port: port)
                    records = records.filter { $0.hostID == id }
                }
                if c.jsonOutput || parsed.has("--json") {
                    let rows = records.map {
                        "{\"host_id\":\(JSONText.quoted($0.hostID)),\"type\":\(JSONText.quoted($0.keyType)),\"fingerprint\":\(JSONText.quoted(KnownHosts.fingerprint($0.key)))}"
                    }
                    c.print("[" + rows.joined(separator: ",") + "]")
                    return 0
                }
                if records.isEmpty { c.print("No synced host keys."); return 0 }
                for r in records { c.print("\(r.hostID.prefix(16))  \(r.keyType)  \(KnownHosts.fingerprint(r.key))") }
            case "rm":
                guard let name = args.popFirst(), args.isEmpty else { c.printError(usage); return 2 }
                let (host, port) = split(name)
                let prefix = SyncedHostKeys.hostID(host: host, port: port) + "/"
                // Every record of the host, readable or not: a damaged one must be removable too.
                let keys = try store.list(SyncedHostKeys.collection, prefix: prefix).map(\.key)
                guard !keys.isEmpty else {
                    c.printError("termhost known-hosts: no synced host key for '\(VisibleText.of(KnownHosts.lookupName(host: host, port: port)))'")
                    return 1
                }
                try store.transaction { for k in keys { try store.remove(SyncedHostKeys.collection, k) } }
                c.print("Removed \(keys.count) synced host key(s) of '\(VisibleText.of(KnownHosts.lookupName(host: host, port: port)))'.")
            default:
                c.printError("termhost known-hosts: unknown subcommand '\(VisibleText.of(sub))'\n\(usage)")
                return 2
            }
            return 0
        } catch {
            c.printError("termhost known-hosts: \(error)")
            return 1
        }
    }

    /// "[host]:port" as known_hosts and ssh-keygen write it; anything else is a host on port 22.
    static func split(_ name: String) -> (host: String, port: Int) {
        if name.hasPrefix("["), let close = name.lastIndex(of: "]"), name[close...].hasPrefix("]:"),
           let port = Int(name[name.index(close, offsetBy: 2)...]), (1...65535).contains(port) {
            return (String(name[name.index(after: name.startIndex)..<close]), port)
        }
        return (name, 22)
    }
}
