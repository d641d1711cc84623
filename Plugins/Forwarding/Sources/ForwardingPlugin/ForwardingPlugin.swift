// The Port Forwarding plugin: saved -L/-R/-D rules run over the SSH plugin's transport service
// ("org.termhost.ssh.transport/1"); it never connects, verifies or authenticates by itself.
import CTermhost
import Foundation
import TermhostSDK

final class ForwardingFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.forwarding", version: "0.1.0", displayName: "Port Forwarding",
        summary: "Saved local (-L), remote (-R) and SOCKS (-D) forwards that recover by themselves.",
        order: 300, scope: .process, after: ["org.termhost.ssh"],
        requiresServices: ["termhost.store/1", "org.termhost.ssh.transport/1"],
        commands: [Command("forward", summary: "Port forwarding rules: add, edit, rm, list, show, start, stop, run, retry", usage: ForwardCommand.usage)],
        tools: [ForwardingTools.forwardList],
        // Each command's state is its own; the manager keeps its state on its queue: in the
        // daemon `forward list` or `start` runs beside a `forward run` of another client.
        concurrentCommands: true)

    let host: PluginHost
    /// The process-scope forwarding service, created on the first `forward run`.
    private var manager: ForwardingManager?
    /// Restarts running rules that another device changed; with the manager.
    private var sync: ForwardingSync?
    private let lock = NSLock()

    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let store = host.store else { command.printError("termhost: the host store is unavailable"); return 1 }
        return ForwardCommand(c: command, rules: RuleStore(store: store), intents: RuleIntents(store: store),
                              manager: { [self] in try startManager() }, host: host).run()
    }

    /// In the daemon, the rules the user started (`forward start`) run again, each time the
    /// daemon starts; never in the CLI, whose launch must not create running intent.
    func activate() throws {
        guard host.isDaemon, let store = host.store else { return }
        let intended: Set<String>
        do { intended = try RuleIntents(store: store).all() } catch {
            host.log(.warning, "forwarding: the started rules cannot be read: \(error.message)")
            return
        }
        guard !intended.isEmpty else { return }
        let rules: [ForwardRule], stored: Set<String>
        do {
            rules = try RuleStore(store: store).all().filter { intended.contains($0.id) }
            stored = Set(try store.list(RuleStore.collection).map(\.key))
        } catch {
            host.log(.warning, "forwarding: the saved rules cannot be read, so none of the started ones runs now: \(error.message)")
            return
        }
        // A rule removed (here or by a synced change) takes its intent with it; one that is
        // stored but unreadable here (a newer version's) keeps it, as the rule itself is kept.
        for id in intended.subtracting(stored) { _ = try? RuleIntents(store: store).remove(id) }
        for id in intended.intersection(stored).subtracting(rules.map(\.id)) {
            host.log(.warning, "forwarding: the started rule '\(VisibleText.of(id))' cannot be read by this version; left as it is, not run")
        }
        guard !rules.isEmpty else { return }
        do {
            let manager = try startManager()
            let host = self.host
            manager.start(rules, scene: 0, keepTrying: true, report: { host.log(.info, VisibleText.of($0)) })
            host.log(.info, "forwarding: starting \(rules.count) rule(s) the user started before: \(rules.map { VisibleText.of($0.name) }.joined(separator: ", "))")
        } catch {
            host.log(.error, "forwarding: the started rules cannot run: \(error.message)")
        }
    }

    private func startManager() throws -> ForwardingManager {
        lock.lock()
        defer { lock.unlock() }
        if let manager { return manager }
        guard let transport = SSHTransport(host: host) else {
            throw ForwardError("termhost forward: the SSH transport service (org.termhost.ssh.transport/1) is unavailable; is the SSH plugin enabled?")
        }
        guard transport.offersWatch else {
            throw ForwardError("termhost forward: the SSH plugin's transport service has no 'watch' (connection loss reports); update the SSH plugin")
        }
        let socksSeconds: Double
        do { socksSeconds = try SocksLimits.handshakeSeconds(ProcessInfo.processInfo.environment) } catch {
            throw ForwardError(error.description)
        }
        let m = ForwardingManager(transport: transport, host: host, socksHandshakeSeconds: socksSeconds)
        manager = m
        sync = ForwardingSync(manager: m, host: host)
        return m
    }

    private var current: ForwardingManager? {
        lock.lock()
        defer { lock.unlock() }
        return manager
    }

    /// Bounded by the host (3 s): listeners and retries stop at once, connections close in
    /// parallel within 2 s. Idempotent.
    func shutdown() {
        lock.lock()
        let watching = sync
        lock.unlock()
        watching?.cancel()
        current?.shutdown(bound: 2)
    }
    /// Background alone changes nothing: a quick return must find healthy forwards (NOTES §5).
    func background() {}
    func expire() { current?.expire() }
    func foreground() { current?.resume() }
}

let plugin = Plugin(id: "org.termhost.forwarding", version: "0.1.0", features: [ForwardingFeature.self]) { host in
    // Saved rules sync (Docs/Sync.md); whether one runs is runtime state and never does.
    _ = try? host.store?.declareSyncable(RuleStore.collection, merge: .fields)
    _ = try? host.store?.declareSyncCheck(RuleStore.collection, SyncedRuleCheck.rule)
}

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
