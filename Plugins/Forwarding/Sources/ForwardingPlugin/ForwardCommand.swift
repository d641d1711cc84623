import Foundation
import Synchronization
import TermhostSDK

/// `termhost forward add|edit|rm|list|show|run|stop|retry`.
struct ForwardCommand {
    static let usage = """
    usage: termhost forward add [--name NAME] HOST (-L|-R|-D) SPEC
           termhost forward edit NAME [--name NEW] [--host HOST] [(-L|-R|-D) SPEC]
           termhost forward rm NAME...
           termhost forward list [--json]
           termhost forward show NAME [--json]
           termhost forward start NAME... | --all
           termhost forward stop NAME...
           termhost forward run NAME...
           termhost forward run HOST (-L|-R|-D) SPEC [(-L|-R|-D) SPEC]...
           termhost forward retry NAME...
           termhost forward restore NAME [--version N]   (a version the sync vault holds; without
                                                          --version, a deleted rule's last version)
    HOST is a saved host (termhost hosts list) or user@host[:port]. SPEC is ssh's:
      -L [bind_address:]port:host:hostport  listen here; the server connects to host:hostport
      -R [bind_address:]port:host:hostport  the server listens (port 0: it picks); we connect here
      -D [bind_address:]port                a SOCKS5 and SOCKS4(a) proxy here; the server makes the connections
    Listeners bind to loopback unless bind_address says otherwise ('*': every address).
    A blank name is saved as HOST plus the ssh argument, e.g. 'prod (-L 8080)'.
    start runs rules in the daemon (started when none runs) and keeps them running: closing
    the terminal does not stop them, and the daemon starts them again whenever it starts, until
    stop. run forwards in the foreground until interrupted instead, like ssh -N, printing each
    state change. All rules of one host share one connection; a lost connection is retried
    after 1, 2, 5, 10, then every 30 s; authentication or host-key failures end the retries.
    run exits 1 when no rule is left running. list shows each rule's state in the daemon and
    in running 'forward run' processes. stop ends a rule wherever it runs (its peers keep
    running; the last rule of a host releases the connection) and ends its start; retry
    starts a failed or stopped rule again where it ran.
    """

    let c: CommandInvocation
    let rules: RuleStore
    /// Which rules `forward start` started (RuleIntents).
    let intents: RuleIntents
    let manager: () throws -> ForwardingManager
    /// The daemon (`start`), and the commands service for `restore` (the sync feature's
    /// `sync restore`).
    let host: PluginHost

    func run() -> Int32 {
        var args = c.arguments
        guard !args.isEmpty else { c.printError(ForwardCommand.usage); return 2 }
        let sub = args.removeFirst()
        do {
            switch sub {
            case "add": return try add(args)
            case "edit": return try edit(args)
            case "rm": return try remove(args)
            case "list": return try list(args)
            case "show": return try show(args)
            case "run": return try runRules(args)
            case "start": return try startRules(args)
            case "stop": return try control(sub, args)
            case "retry": return try control(sub, args)
            case "restore":
                return SyncedRecordRestore.run(c, args, commands: host.commands, namespace: ForwardingFeature.info.id, collection: RuleStore.collection,
                                               command: "termhost forward restore")
            default:
                c.printError("termhost forward: unknown subcommand '\(VisibleText.of(sub))' (add, edit, rm, list, show, start, stop, run, retry, restore)")
                return 2
            }
        } catch let e as CommandFinished {
            return e.status
        } catch let e as UsageError {
            c.printError(e.message)
            return 2
        } catch let e as ForwardError where !e.message.hasPrefix("termhost") {
            // Spec errors name the argument; say which command read it. The argument (or a
            // name from the store) is shown, never obeyed.
            c.printError("termhost forward \(VisibleText.of(sub)): \(VisibleText.of(e.message))")
            return 2
        } catch {
            c.printError(VisibleText.of(error.message))
            return 1
        }
    }

    struct UsageError: Error { let message: String }

    /// Options --name/--host/--json and (-L|-R|-D) SPEC pairs (-L8080 too), in any order; the rest positional.
    struct Options {
        var name: String?
        var host: String?
        var json = false
        var specs: [(ForwardKind, String)] = []
        var positional: [String] = []
        var all = false
    }

    // Each subcommand's usage, shown after its usage errors and for --help.
    static let addUsage = "usage: termhost forward add [--name NAME] HOST (-L|-R|-D) SPEC"
    static let editUsage = "usage: termhost forward edit NAME [--name NEW] [--host HOST] [(-L|-R|-D) SPEC]"
    static let showUsage = "usage: termhost forward show NAME [--json]"
    static let runUsage = "usage: termhost forward run NAME... | HOST (-L|-R|-D) SPEC..."
    static let startUsage = "usage: termhost forward start NAME... | --all"
    static func usage(of sub: String) -> String {
        switch sub {
        case "add": addUsage
        case "edit": editUsage
        case "show": showUsage
        case "run": runUsage
        case "start": startUsage
        default: "usage: termhost forward list [--json]"
        }
    }

    func parse(_ args: [String], sub: String) throws -> Options {
        let spec = CommandArguments("termhost forward \(sub)", usage: ForwardCommand.usage(of: sub),
                                    options: [.value("--name"), .value("--host"), .flag("--json"), .value("-L"), .value("-R"), .value("-D")]
                                        + (sub == "start" ? [.flag("--all")] : []))
        let parsed = try c.parse(args, with: spec)
        var o = Options()
        o.name = parsed.value("--name")
        o.host = parsed.value("--host")
        o.json = parsed.has("--json")
        o.specs = parsed.occurrences.compactMap { given in
            ForwardKind(flag: given.option).flatMap { kind in given.value.map { (kind, $0) } }
        }
        o.positional = parsed.arguments
        o.all = parsed.has("--all")
        return o
    }

    func makeRule(id: String, name: String?, host: String, kind: ForwardKind, spec: String) throws -> ForwardRule {
        guard !host.isEmpty else { throw UsageError(message: "termhost forward: the host is empty") }
        let p = try ForwardSpec.parse(kind, spec)
        let trimmed = name?.trimmingCharacters(in: .whitespaces) ?? ""
        return ForwardRule(id: id,
                           name: trimmed.isEmpty ? ForwardRule.defaultName(host: host, kind: kind, bindAddress: p.bindAddress, bindPort: p.bindPort) : trimmed,
                           host: host, kind: kind, bindAddress: p.bindAddress, bindPort: p.bindPort,
                           targetHost: p.targetHost, targetPort: p.targetPort)
    }

    func add(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "add")
        guard o.positional.count == 1, o.specs.count == 1 else {
            throw UsageError(message: ForwardCommand.addUsage)
        }
        let rule = try makeRule(id: ForwardRule.newID(), name: o.name, host: o.positional[0], kind: o.specs[0].0, spec: o.specs[0].1)
        try rules.save(rule)
        c.print("Saved forward '\(VisibleText.of(rule.name))': \(VisibleText.of(rule.host)) \(VisibleText.of(rule.sshArgument))")
        return 0
    }

    func edit(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "edit")
        guard o.positional.count == 1, o.specs.count <= 1 else {
            throw UsageError(message: ForwardCommand.editUsage)
        }
        let old = try rules.find(o.positional[0])
        let host = o.host ?? old.host
        var rule: ForwardRule
        if let (kind, spec) = o.specs.first {
            // A new spec with the old name keeps the name; a blank --name asks for the default.
            rule = try makeRule(id: old.id, name: o.name ?? old.name, host: host, kind: kind, spec: spec)
        } else {
            rule = old
            rule.host = host
            if let name = o.name {
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                rule.name = trimmed.isEmpty ? ForwardRule.defaultName(host: host, kind: old.kind, bindAddress: old.bindAddress, bindPort: old.bindPort) : trimmed
            }
        }
        try rules.save(rule)
        c.print("Saved forward '\(VisibleText.of(rule.name))': \(VisibleText.of(rule.host)) \(VisibleText.of(rule.sshArgument))")
        return 0
    }

    func remove(_ args: [String]) throws -> Int32 {
        guard !args.isEmpty else { throw UsageError(message: "usage: termhost forward rm NAME...") }
        let found = try args.map { try rules.find($0) }   // all or nothing: check every name first
        for rule in found {
            try rules.remove(rule)
            try intents.remove(rule.id)
            c.print("Removed forward '\(VisibleText.of(rule.name))'")
        }
        return 0
    }

    func list(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "list")
        let all = try rules.all()
        try RunDirectory.checkedIfPresent()
        let states = try self.states()
        for key in try rules.unreadable() {
            c.printError("termhost forward: the stored rule '\(VisibleText.of(key))' cannot be read (left as it is)")
        }
        if o.json || c.jsonOutput {
            c.print(json(all.map { describe($0, state: states[$0.id] ?? "stopped") }))
            return 0
        }
        if all.isEmpty { c.print("No forwarding rules (add one with 'termhost forward add').") ; return 0 }
        // Names, hosts and states come from the store and from other processes' status files.
        let rows = [["NAME", "HOST", "FORWARD", "STATE"]] + all.map {
            [$0.name, $0.host, $0.sshArgument, states[$0.id] ?? "stopped"].map(VisibleText.of)
        }
        let widths = (0..<3).map { col in rows.map { $0[col].count }.max()! }
        for row in rows {
            c.print((0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ") + "  " + row[3])
        }
        return 0
    }

    func show(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "show")
        guard o.positional.count == 1 else { throw UsageError(message: ForwardCommand.showUsage) }
        let rule = try rules.find(o.positional[0])
        try RunDirectory.checkedIfPresent()
        let state = try states()[rule.id] ?? "stopped"
        if o.json || c.jsonOutput { c.print(json([describe(rule, state: state)])); return 0 }
        c.print("name:    \(VisibleText.of(rule.name))")
        c.print("host:    \(VisibleText.of(rule.host))")
        c.print("type:    \(rule.kind.rawValue) (\(rule.kind.flag))")
        c.print("listen:  \(VisibleText.of(rule.kind == .remote ? "server " + (rule.remoteBindHost.isEmpty ? "*" : rule.remoteBindHost) : ForwardSpec.bracketed(rule.localBindHost))):\(rule.bindPort)")
        if let h = rule.targetHost, let p = rule.targetPort { c.print("target:  \(VisibleText.of(ForwardSpec.bracketed(h))):\(p)\(rule.kind == .local ? " (from the server)" : "")") }
        c.print("ssh:     \(VisibleText.of(rule.sshArgument))")
        c.print("state:   \(VisibleText.of(state))")
        return 0
    }

    /// Each rule's state from the daemon and every running `forward run` (their status files);
    /// a started rule that nothing runs now waits for the daemon.
    func states() throws -> [String: String] {
        var states = StatusFile.readAll()
        for id in try intents.all() where states[id] == nil { states[id] = "stopped (started: runs when the daemon does)" }
        return states
    }

    func describe(_ r: ForwardRule, state: String) -> [String: Any] {
        var d: [String: Any] = ["id": r.id, "name": r.name, "host": r.host, "type": r.kind.rawValue,
                                "bindPort": r.bindPort, "ssh": r.sshArgument, "state": state]
        d["bindAddress"] = r.kind == .remote ? r.remoteBindHost : r.localBindHost
        if let h = r.targetHost { d["targetHost"] = h }
        if let p = r.targetPort { d["targetPort"] = p }
        return d
    }

    func json(_ value: [[String: Any]]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Saved rules by name, or one host's ad-hoc specs; runs them until interrupted.
    func runRules(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "run")
        var selected: [ForwardRule] = []
        if o.specs.isEmpty {
            guard !o.positional.isEmpty else { throw UsageError(message: ForwardCommand.runUsage) }
            selected = try o.positional.map { try rules.find($0) }
        } else {
            guard o.positional.count == 1 else {
                throw UsageError(message: "termhost forward run: ad-hoc forwards take exactly one HOST before their -L/-R/-D specs")
            }
            selected = try o.specs.enumerated().map { i, s in
                try makeRule(id: "ad-hoc-\(i)", name: nil, host: o.positional[0], kind: s.0, spec: s.1)
            }
        }
        let manager = try self.manager()
        let done = DispatchSemaphore(value: 0)
        // Printed from a queue of its own: the manager's never waits on this terminal.
        let out = RunOutput(duplicating: c.stdoutFD)
        let log = manager.pluginHost
        manager.start(selected, scene: c.scene, report: { line in
            // Every part from outside was made visible where the line was built; this catches
            // anything that was not (a line is always one line).
            let shown = VisibleText.of(line)
            out?.send(shown)
            log.log(.info, shown)
        }, onIdle: { done.signal() })
        // Ended however it ends: nothing is written to this command's output afterwards.
        defer {
            manager.release(scene: c.scene)
            out?.close()
        }
        // Ctrl-C (or SIGTERM, SIGHUP) stops every rule here, each saying so, and the command
        // returns: the host waits for it before shutting down. Without this the command stayed
        // inside run_command() until the host gave up on it (3 s) and abandoned the plugin.
        // Registered after start, so a stop asked for at once still comes after the rules began.
        let interrupted = Atomic<Bool>(false)
        let registration = try? manager.pluginHost.cancellation?.onCancel(scene: c.scene) { scene in
            interrupted.store(true, ordering: .releasing)
            manager.stopAll(scene: scene)
        }
        defer { registration?.remove() }
        done.wait()
        if interrupted.load(ordering: .acquiring) { return 130 }
        // Idle: every rule failed or was stopped.
        let failed = manager.snapshot(scene: c.scene).filter { $0.state.hasPrefix("failed") }
        return failed.isEmpty ? 0 : 1
    }

    /// Sends stop or retry to every running `forward run` of this user and the daemon
    /// (ControlSocket). A saved rule is found by its name; an ad-hoc rule by the name `run`
    /// printed for it. `stop` also ends a rule's start (RuleIntents), running or not.
    func control(_ verb: String, _ names: [String]) throws -> Int32 {
        guard !names.isEmpty else { throw UsageError(message: "usage: termhost forward \(verb) NAME...") }
        try RunDirectory.checkedIfPresent()
        var status: Int32 = 0
        for name in names {
            let saved = try? rules.find(name)
            let target = saved?.id ?? name
            let wasStarted = try verb == "stop" && saved.map { try intents.remove($0.id) } == true
            let answers = ControlSocket.request("\(verb) \(target)").filter { $0.reply != "none" }
            if answers.isEmpty && wasStarted {
                c.print("Forward '\(VisibleText.of(name))' is no longer started (it was not running)")
            } else if answers.isEmpty {
                c.printError("termhost forward \(verb): no running 'forward run' has a rule named '\(VisibleText.of(name))' (see 'termhost forward list')")
                status = 1
            }
            for (pid, reply) in answers {
                if reply.hasPrefix("ok ") {
                    // Another process's words: shown, never obeyed.
                    let text = VisibleText.of(String(reply.dropFirst(3)))
                    c.print(text.prefix(1).uppercased() + text.dropFirst() + " (process \(pid))")
                } else {
                    c.printError("termhost forward \(verb): process \(pid): \(VisibleText.of(reply.hasPrefix("error ") ? String(reply.dropFirst(6)) : reply))")
                    status = 1
                }
            }
        }
        return status
    }
}
