import Foundation
import Glibc
import TermhostDaemon
import TermhostRuntime
import TermhostSDK

/// The persistent terminal sessions in the daemon (Docs/Daemon.md): `termhost ssh --persist`
/// opens one and attaches to it, `termhost attach` returns to one, `termhost sessions` lists,
/// shows the events of, and kills them. The sessions themselves belong to the SSH feature in
/// the daemon (its service org.termhost.ssh.sessions/1); these commands are the daemon's
/// clients and run no plugin code here.
enum SessionsCommand {
    static let usage = """
    usage: termhost sessions [--json]                       the persistent sessions in the daemon
           termhost sessions events SESSION [--since T] [--json]
                                                             what happened in one (T: seconds since 1970)
           termhost sessions kill SESSION                    end one (its shell and connection)
           termhost attach [--no-autostart] [SESSION]        this terminal joins a session
           termhost ssh --persist [--remote-tmux] [-A|-a] [-J JUMP] HOST
                                                             open a session in the daemon and attach
    A session lives in the daemon ('termhost daemon'), not in the terminal: closing the
    terminal or detaching (~d after a newline) leaves it running. Any number of terminals may
    attach to one session: each sees its output, any may type, the latest to resize wins.
    attach without SESSION joins the session with the latest output. attach and ssh --persist
    start the daemon when none runs, unless --no-autostart is given.
    A lost connection is reconnected (after 1, 2, 5, 10, then every 30 s). --remote-tmux runs
    the shell in tmux on the host, so the same shell, its jobs and its scrollback come back
    after a reconnect and after a restart of the daemon; without it a reconnect is a new shell.
    """

    static let listSpec = CommandArguments("termhost sessions", usage: usage, options: [.flag("--json"), .value("--since")], maxArguments: 2)
    static let attachSpec = CommandArguments("termhost attach", usage: usage, options: [.flag("--no-autostart")], maxArguments: 1)
    static let persistSpec = CommandArguments("termhost ssh --persist", usage: usage,
                                              options: [.flag("--persist"), .flag("--remote-tmux"), .flag("--no-autostart"), .flag("-A"), .flag("-a"), .flag("-q"), .value("-J")],
                                              optionsEndAtFirstArgument: true)

    static func client(_ g: GlobalOptions, autostart: Bool) throws(DaemonError) -> DaemonClient {
        try DaemonAutostart.connect("termhost \(TermhostVersion.string) \(CommandLine.arguments.dropFirst().first ?? "")", g, autostart: autostart)
    }

    // MARK: termhost sessions

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, listSpec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        let json = g.json || parsed.has("--json")
        switch (parsed.arguments.first, parsed.arguments.count) {
        case (nil, _): return list(json: json, g)
        case ("events", 2): return events(parsed.arguments[1], since: parsed.value("--since"), json: json, g)
        case ("kill", 2): return kill(parsed.arguments[1], g)
        default:
            Output.err("termhost sessions: expected no argument, 'events SESSION' or 'kill SESSION'\n\(usage)")
            return ExitCode.usage
        }
    }

    static func list(json: Bool, _ g: GlobalOptions) -> Int32 {
        let sessions: [[String: Any]]
        do throws(DaemonError) {
            let reply = try client(g, autostart: false).request("sessions")
            sessions = reply["sessions"] as? [[String: Any]] ?? []
        } catch where error.notRunning {
            sessions = []
        } catch {
            Output.err("termhost sessions: \(error.description)")
            return ExitCode.failure
        }
        if json {
            Output.out(String(decoding: (try? JSONSerialization.data(withJSONObject: sessions, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8), as: UTF8.self))
            return ExitCode.success
        }
        guard !sessions.isEmpty else {
            Output.out("no persistent sessions ('termhost ssh --persist HOST' opens one)")
            return ExitCode.success
        }
        let now = Date().timeIntervalSince1970
        var rows = [["ID", "NAME", "HOST", "STATE", "CLIENTS", "LAST OUTPUT", "SINCE"]]
        for s in sessions {
            let last = (s["lastOutputAt"] as? NSNumber).map { ago(now - $0.doubleValue) } ?? "-"
            let since = (s["startedAt"] as? NSNumber).map { local($0.doubleValue) } ?? "-"
            // The assistant's Asks on the session's host wait: how many, and where to answer them.
            let asks = (s["pendingApprovals"] as? NSNumber)?.intValue ?? 0
            let state = text(s["state"]) + (asks > 0 ? " (\(asks) approval\(asks == 1 ? "" : "s"): termhost approvals)" : "")
            rows.append([text(s["id"]), text(s["name"]), "\(text(s["user"]))@\(text(s["host"]))", state,
                         "\((s["clients"] as? NSNumber)?.intValue ?? 0)", last, since])
        }
        Output.table(rows, indent: "")
        return ExitCode.success
    }

    static func events(_ id: String, since: String?, json: Bool, _ g: GlobalOptions) -> Int32 {
        var request: [String: Any] = ["op": "events", "session": id]
        if let since {
            guard let t = Double(since), t.isFinite, t >= 0 else {
                Output.err("termhost sessions events: --since takes seconds since 1970 (e.g. \(Int(Date().timeIntervalSince1970) - 3600))")
                return ExitCode.usage
            }
            request["since"] = t
        }
        let events: [[String: Any]]
        do throws(DaemonError) { events = try client(g, autostart: false).request(request)["events"] as? [[String: Any]] ?? [] } catch {
            Output.err("termhost sessions events: \(error.description)")
            return ExitCode.failure
        }
        if json {
            Output.out(String(decoding: (try? JSONSerialization.data(withJSONObject: events, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8), as: UTF8.self))
            return ExitCode.success
        }
        for e in events {
            let at = (e["at"] as? NSNumber).map { local($0.doubleValue, seconds: true) } ?? "-"
            let details = e.filter { $0.key != "at" && $0.key != "kind" }.sorted { $0.key < $1.key }
                .map { "\($0.key)=\(text($0.value))" }.joined(separator: " ")
            Output.out("\(at)  \(text(e["kind"]))\(details.isEmpty ? "" : "  " + details)")
        }
        return ExitCode.success
    }

    static func kill(_ id: String, _ g: GlobalOptions) -> Int32 {
        do throws(DaemonError) { _ = try client(g, autostart: false).request(["op": "kill", "session": id]) } catch {
            Output.err("termhost sessions kill: \(error.description)")
            return ExitCode.failure
        }
        Output.err("termhost: session \(VisibleText.of(id)) killed")
        return ExitCode.success
    }

    // MARK: termhost attach

    static func attach(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, attachSpec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        let client: DaemonClient
        do throws(DaemonError) { client = try self.client(g, autostart: !(parsed.has("--no-autostart") || g.noAutostart)) } catch {
            Output.err("termhost attach: \(error.description)")
            return ExitCode.failure
        }
        var id = parsed.arguments.first
        if id == nil {
            // The session with the latest output, as tmux attaches the most recent one.
            let sessions = ((try? client.request("sessions"))?["sessions"] as? [[String: Any]] ?? []).filter { text($0["state"]) != "ended" }
            id = sessions.max { ($0["lastOutputAt"] as? NSNumber)?.doubleValue ?? 0 < ($1["lastOutputAt"] as? NSNumber)?.doubleValue ?? 0 }?["id"] as? String
            guard id != nil else {
                Output.err("termhost attach: no persistent session to attach to ('termhost ssh --persist HOST' opens one)")
                return ExitCode.failure
            }
        }
        return AttachClient.run(client, session: id!)
    }

    // MARK: termhost ssh --persist

    /// Whether `termhost ssh ARGS` asks for a persistent session: `--persist` among the options
    /// before the host (after it, words are the remote command's).
    static func wantsPersist(_ args: [String]) -> Bool {
        var i = 0
        while i < args.count, args[i].hasPrefix("-"), args[i] != "--" {
            if args[i] == "--persist" { return true }
            i += args[i] == "-J" ? 2 : 1
        }
        return false
    }

    static func persist(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, persistSpec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        guard parsed.arguments.count == 1, let host = parsed.arguments.first else {
            Output.err(parsed.arguments.count > 1
                       ? "termhost ssh --persist: a persistent session is a shell; run a command with 'termhost exec HOST -- COMMAND'"
                       : "termhost ssh --persist: which host?\n\(usage)")
            return ExitCode.usage
        }
        var request: [String: Any] = ["host": host]
        if let size = AttachClient.windowSize() { request["columns"] = size.columns; request["rows"] = size.rows }
        if let term = ProcessInfo.processInfo.environment["TERM"], !term.isEmpty { request["term"] = term }
        if parsed.has("--remote-tmux") { request["remoteTmux"] = true }
        if parsed.has("-A") { request["forwardAgent"] = true }
        if parsed.has("-a") { request["forwardAgent"] = false }
        let jump = parsed.values("-J").flatMap { $0.split(separator: ",").map(String.init) }
        if !jump.isEmpty { request["jump"] = jump }
        let client: DaemonClient
        let id: String
        do throws(DaemonError) {
            client = try self.client(g, autostart: !(parsed.has("--no-autostart") || g.noAutostart))
            let reply = try client.request(["op": "open", "request": request])
            guard let opened = (reply["session"] as? [String: Any])?["id"] as? String else {
                throw DaemonError("the daemon's reply names no session")
            }
            id = opened
        } catch {
            Output.err("termhost ssh --persist: \(error.description)")
            return 255
        }
        if !parsed.has("-q") && !g.json {
            Output.err("[persistent session \(id) to \(VisibleText.of(host)): ~d detaches, 'termhost attach \(id)' returns]")
        }
        return AttachClient.run(client, session: id)
    }

    // MARK: formatting

    /// A value from the daemon as text safe for the terminal.
    static func text(_ value: Any?) -> String {
        switch value {
        case let s as String: VisibleText.of(s)
        case let n as NSNumber: n.stringValue
        case nil, is NSNull: "-"
        default: VisibleText.of("\(value!)")
        }
    }

    static func ago(_ seconds: Double) -> String {
        let s = max(0, Int(seconds))
        if s < 60 { return "\(s)s ago" }
        if s < 3600 { return "\(s / 60)m ago" }
        if s < 86_400 { return "\(s / 3600)h ago" }
        return "\(s / 86_400)d ago"
    }

    static func local(_ t: Double, seconds: Bool = false) -> String {
        let f = DateFormatter()
        f.dateFormat = seconds ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm"
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
