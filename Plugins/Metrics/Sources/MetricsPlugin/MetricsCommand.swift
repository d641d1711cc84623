import Foundation
import MetricsCore
import TermhostSDK

/// `termhost metrics ...`: the monitor list (saved in the host store) and the outputs.
struct MetricsCommand {
    static let usage = """
    usage: termhost metrics add HOST [--interval SECONDS] [--interface NAME]...
           termhost metrics rm|pause|resume HOST
           termhost metrics move HOST POSITION
           termhost metrics restore HOST [--version N]   (a version the sync vault holds; without
                                                          --version, a deleted monitor's last version)
           termhost metrics list [--json]
           termhost metrics show HOST [--json]
           termhost metrics watch [HOST]...
           termhost metrics serve [--background] [--listen ADDRESS:PORT] [HOST]...
           termhost metrics serve --stop [--listen ADDRESS:PORT]
    HOST is a saved host (termhost hosts list) or user@host[:port]; the SSH plugin connects.
    add saves a monitor (sampled every second unless --interval; --interface picks the network
    interfaces shown instead of the physical ones). pause keeps it but stops sampling it.
    show samples the host (twice, so rates are known) and prints a snapshot with processes.
    watch is a live dashboard of the given hosts, or of every monitor: q quits,
    Tab picks the host whose processes are shown, c and m sort them by CPU or memory.
    serve answers GET /metrics in the Prometheus text format (default 127.0.0.1:9464), in the
    foreground until interrupted, or with --background in the daemon (started when none runs),
    which serves it again whenever it starts, until serve --stop.
    States: connecting, collecting, live, paused, sleeping, failed (with the reason).
    """

    let host: PluginHost
    let invocation: CommandInvocation

    func run() -> Int32 {
        var args = invocation.arguments
        guard !args.isEmpty else { invocation.printError(MetricsCommand.usage); return 2 }
        let sub = args.removeFirst()
        guard let store = host.store else { invocation.printError("termhost metrics: the host store is unavailable"); return 1 }
        let monitors = MonitorStore(store: store)
        do {
            switch sub {
            case "add": return try add(args, monitors)
            case "restore":
                return SyncedRecordRestore.run(invocation, args, commands: host.commands, namespace: MetricsFeature.info.id,
                                               collection: MonitorStore.collection, command: "termhost metrics restore")
            case "rm", "remove": return try one(args, sub) { m in
                try monitors.remove(m.host)
                Samplers.remove(m.host)
                return "Removed monitor '\(VisibleText.of(m.host))'."
            } lookup: { try monitors.find($0) }
            case "pause", "resume": return try one(args, sub) { m in
                var m = m
                m.paused = sub == "pause"
                // resume also retries a failed monitor (watch and serve see the count change).
                if !m.paused { m.resumes = (m.resumes ?? 0) + 1 }
                try monitors.save(m)
                Samplers.find(m.host)?.setPaused(m.paused)
                if !m.paused { Samplers.find(m.host)?.retry() }
                return sub == "pause" ? "Paused monitor '\(VisibleText.of(m.host))'." : "Resumed monitor '\(VisibleText.of(m.host))'."
            } lookup: { try monitors.find($0) }
            case "move":
                guard args.count == 2 else { return usageError("usage: termhost metrics move HOST POSITION (1 is the top)") }
                let position: Int
                do { position = try BoundedNumber.integer(args[1], name: "POSITION", in: 1...1_000_000) }
                catch { return usageError("termhost metrics move: \(error)") }
                guard try monitors.find(args[0]) != nil else { return notFound(args[0]) }
                try monitors.move(args[0], to: position)
                invocation.print("Moved monitor '\(VisibleText.of(args[0]))' to position \(min(position, try monitors.all().count)).")
                return 0
            case "list": return try list(args, monitors)
            case "show": return try show(args, monitors)
            case "watch":
                let parsed: ParsedArguments
                do { parsed = try invocation.parse(args, with: Self.watchArguments) } catch { return error.status }
                return try Dashboard(command: self, monitors: monitors).run(parsed.arguments)
            case "serve": return try Exporter(command: self, monitors: monitors).run(args)
            default: return usageError("termhost metrics: unknown subcommand '\(VisibleText.of(sub))'\n" + MetricsCommand.usage)
            }
        } catch {
            invocation.printError("termhost metrics: \(VisibleText.of("\(error)"))")
            return 1
        }
    }

    func usageError(_ text: String) -> Int32 { invocation.printError(text); return 2 }

    func notFound(_ host: String) -> Int32 {
        invocation.printError("termhost metrics: no monitor '\(VisibleText.of(host))' (termhost metrics list shows them)")
        return 1
    }

    private func one(_ args: [String], _ sub: String, _ body: (Monitor) throws -> String,
                     lookup: (String) throws -> Monitor?) throws -> Int32 {
        guard args.count == 1 else { return usageError("usage: termhost metrics \(sub) HOST") }
        guard let m = try lookup(args[0]) else { return notFound(args[0]) }
        invocation.print(try body(m))
        return 0
    }

    static let addUsage = "usage: termhost metrics add HOST [--interval SECONDS] [--interface NAME]..."
    static let addArguments = CommandArguments("termhost metrics add", usage: addUsage,
                                               options: [.value("--interval"), .value("--interface")], maxArguments: 1)

    private func add(_ args: [String], _ monitors: MonitorStore) throws -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(args, with: Self.addArguments) } catch { return error.status }
        guard let name = parsed.arguments.first else { return usageError(Self.addUsage) }
        // Orders come from the store: the next one saturates rather than trap on Int.max.
        let last = try monitors.all().map(\.order).max() ?? 0
        var m = Monitor(host: name, order: last == Int.max ? last : last + 1)
        do {
            if let interval = try parsed.integer("--interval", in: 1...3600, unit: "seconds") { m.interval = interval }
        } catch {
            return invocation.reportUsageError(error)
        }
        if parsed.has("--interface") { m.interfaces = parsed.values("--interface") }
        if try monitors.find(name) != nil {
            invocation.printError("termhost metrics: a monitor for '\(VisibleText.of(name))' exists already (termhost metrics rm \(VisibleText.of(name)) first)")
            return 1
        }
        try monitors.save(m)
        invocation.print("Added monitor '\(VisibleText.of(name))'.")
        return 0
    }

    static let watchArguments = CommandArguments("termhost metrics watch", usage: "usage: termhost metrics watch [HOST]...")

    static let listArguments = CommandArguments("termhost metrics list", usage: "usage: termhost metrics list [--json]",
                                                options: [.flag("--json")], maxArguments: 0)

    private func list(_ args: [String], _ monitors: MonitorStore) throws -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(args, with: Self.listArguments) } catch { return error.status }
        let all = try monitors.all()
        if invocation.jsonOutput || parsed.has("--json") {
            invocation.print(JSON.array(all.enumerated().map { i, m in
                .object([("position", .int(i + 1)), ("host", .string(m.host)), ("paused", .bool(m.paused)),
                         ("intervalSeconds", .int(m.interval)),
                         ("interfaces", m.interfaces.map { .array($0.map { .string($0) }) } ?? .null)])
            }).text)
            return 0
        }
        for (i, m) in all.enumerated() {
            let interfaces = m.interfaces.map { "interfaces " + $0.joined(separator: ",") } ?? "physical interfaces"
            invocation.print("\(i + 1)  \(VisibleText.of(m.host))  \(m.paused ? "paused" : "active")  every \(m.interval) s  \(VisibleText.of(interfaces))")
        }
        return 0
    }

    /// The transport, or a message saying why there is none.
    func transport() -> SSHTransport? {
        if let t = SSHTransport(host: host), t.offersOpenExec { return t }
        invocation.printError("termhost metrics: the SSH plugin's transport service (org.termhost.ssh.transport/1 with open_exec) is not available: is the SSH plugin installed and enabled?")
        return nil
    }

    static let showUsage = "usage: termhost metrics show HOST [--json]"
    static let showArguments = CommandArguments("termhost metrics show", usage: showUsage, options: [.flag("--json")])

    private func show(_ args: [String], _ monitors: MonitorStore) throws -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(args, with: Self.showArguments) } catch { return error.status }
        guard parsed.arguments.count == 1 else { return usageError(Self.showUsage) }
        let name = parsed.arguments[0]
        let json = invocation.jsonOutput || parsed.has("--json")
        let saved = try monitors.find(name)
        let report: HostReport
        if saved?.paused == true {
            // A paused monitor stays paused: show says so without connecting.
            report = HostReport(host: name, state: .paused, interval: Double(saved!.config.interval))
        } else {
            guard let transport = transport() else { return 1 }
            // Every second whatever the saved interval: show needs two samples within its
            // 30 s. (A sampler already running in this process is used as it is.)
            var config = saved?.config ?? .init()
            config.interval = 1
            let sampler = Samplers.acquire(name, config: config, transport: transport,
                                           scene: invocation.scene, paused: false, details: true)
            // One-shot: the first failure is the answer (the sampler would retry, show does not wait).
            report = sampler.wait(timeout: 30) { r in
                if case .failed = r.state { return true }
                return r.state == .live && r.processes != nil
            }
            // Done with it: details off, and the sampler stops once it has been unused for
            // Samplers.showLinger seconds (Docs/Metrics.md).
            sampler.observeDetails(false)
            Samplers.release(sampler, linger: Samplers.showLinger)
        }
        let now = Date().timeIntervalSince1970
        invocation.print(json ? SnapshotJSON.render(report, now: now).text : Format.report(report, now: now))
        return report.state == .live || report.state == .paused ? 0 : 1
    }
}
