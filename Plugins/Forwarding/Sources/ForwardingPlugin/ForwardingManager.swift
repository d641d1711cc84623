import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// The plugin's process-scope service: runs rules, shares one connection per host, recovers
/// lost connections, and reports every state change. All state lives on `queue`; sockets on
/// the reactor thread; blocking transport calls on each host link's queue (`HostLink.call`).
final class ForwardingManager: @unchecked Sendable {
    let transport: SSHTransport
    let pluginHost: PluginHost
    let queue = DispatchQueue(label: "termhost.forwarding.manager")
    let reactor = Reactor()
    let workers = WorkerPool(threads: 4, name: "termhost.forwarding.connect")
    /// Transport calls submitted and not yet returned (HostLink.call); shutdown waits for them.
    private let inFlight = DispatchGroup()
    /// Set first thing in shutdown, read by transport calls off `queue`.
    private let closingDown = Atomic<Bool>(false)
    var isClosingDown: Bool { closingDown.load(ordering: .acquiring) }
    /// Host links by host; touched on `queue` only.
    var links: [String: HostLink] = [:]
    private var runtimes: [RuleRuntime] = []
    private(set) var shuttingDown = false
    private(set) var expired = false
    /// How many start() and restart() calls are between stopping or starting their rules: an
    /// early failure, or one restart ending while another is in flight, must not look like "all
    /// ended". A count, not a flag: overlapping restarts each hold it.
    private var starting = 0
    private var control: ControlSocket?
    /// Who started rules, by scene: a `forward run` command (its scene, where its connections
    /// may prompt), or the daemon's running intent (scene 0, never prompting). Each hears its
    /// own rules' state changes and is told when none of them means to run any more. [queue]
    private var owners: [UInt64: Owner] = [:]

    struct Owner {
        /// Where its rules' state changes go (a `forward run`'s output; the log for scene 0).
        let report: @Sendable (String) -> Void
        /// Told whenever none of its rules has intent any more (all failed or stopped).
        let onIdle: @Sendable () -> Void
    }
    let status: StatusFile
    /// How long a SOCKS client has for its greeting and request (SocksLimits).
    let socksHandshakeSeconds: Double

    init(transport: SSHTransport, host: PluginHost, socksHandshakeSeconds: Double = SocksLimits.defaultHandshakeSeconds) {
        self.transport = transport
        pluginHost = host
        status = StatusFile()
        self.socksHandshakeSeconds = socksHandshakeSeconds
    }

    // MARK: Starting and stopping rules [any-thread]

    /// Explicit intent: binds local listeners at once (a port in use fails that rule only),
    /// then brings up each host's shared connection. `scene` owns the rules: `forward run`'s
    /// (its `report` and `onIdle` are its own), or 0 for the daemon's running intent.
    /// `keepTrying`: the daemon restoring its intent (RuleRuntime.keepsTrying).
    func start(_ rules: [ForwardRule], scene: UInt64, keepTrying: Bool = false,
               report: @escaping @Sendable (String) -> Void, onIdle: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in startOnQueue(rules, scene: scene, keepTrying: keepTrying, report: report, onIdle: onIdle) }
    }

    /// [queue]
    private func startOnQueue(_ rules: [ForwardRule], scene: UInt64, keepTrying: Bool,
                              report: @escaping @Sendable (String) -> Void, onIdle: @escaping @Sendable () -> Void) {
        starting += 1
        defer { starting -= 1; checkIdle() }
        owners[scene] = Owner(report: report, onIdle: onIdle)
        openControl()
        for rule in rules {
            // One runtime per rule and owner: a stopped one of an earlier start gives way.
            runtimes.removeAll { $0.scene == scene && $0.rule.id == rule.id && !$0.state.hasIntent }
            let runtime = RuleRuntime(rule, scene: scene, keepsTrying: keepTrying)
            runtimes.append(runtime)
            begin(runtime)
        }
    }

    /// `forward start`: starts, as the daemon's own (scene 0), every rule not running as its
    /// own already, in one step on the queue (two clients starting one rule start it once);
    /// returns the IDs of those already running. [not on queue]
    func startOwned(_ rules: [ForwardRule], report: @escaping @Sendable (String) -> Void) -> Set<String> {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync {
            let running = Set(runtimes.filter { $0.scene == 0 && $0.state.hasIntent }.map(\.rule.id))
            startOnQueue(rules.filter { !running.contains($0.id) }, scene: 0, keepTrying: false, report: report, onIdle: {})
            return running
        }
    }

    /// A `forward run` ended: a rule of its still running (one `forward retry` started again
    /// just before) stops, its output is no longer written to, and its rules are forgotten.
    /// [not on queue]
    func release(scene: UInt64) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync {
            for r in runtimes where r.scene == scene && r.state.hasIntent { stop(r, reason: nil) }
            owners[scene] = nil
            runtimes.removeAll { $0.scene == scene }
            // Now, not coalesced: the client's next `forward list` must not show them running.
            writeStatusFile()
        }
    }

    /// `forward stop|retry` from another shell (ControlSocket's protocol): the reply line, or
    /// "none" when this process runs no rule with that ID or name. [not on queue]
    func control(_ request: String) -> String {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let parts = request.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, parts[0] == "stop" || parts[0] == "retry" else { return "error unknown request '\(VisibleText.of(request))'" }
        let (verb, target) = (parts[0], parts[1])
        return queue.sync { [self] in
            // One runtime per rule and run: a retry replaces the old one in place.
            let matches = runtimes.filter { $0.rule.id == target || $0.rule.name == target }
            guard !matches.isEmpty else { return "none" }
            guard !shuttingDown else { return "error this process is shutting down" }
            var done: [String] = []
            for r in matches {
                switch (verb, r.state.hasIntent) {
                case ("stop", true):
                    stop(r, reason: nil)
                    done.append("stopped \(r.label)")
                case ("stop", false):
                    done.append("\(r.label) was already \(r.state.text(connections: 0))")
                case (_, true):
                    done.append("\(r.label) is already running (\(r.state.text(connections: r.connections.load(ordering: .relaxed))))")
                case _ where owners[r.scene] == nil:
                    // Its `forward run` has ended (it is returning): nobody would own the rule.
                    done.append("\(r.label) was run by a 'forward run' that has ended")
                default:
                    // Explicit intent again, as a new run of the rule would have.
                    let fresh = RuleRuntime(r.rule, scene: r.scene, keepsTrying: r.keepsTrying)
                    runtimes[runtimes.firstIndex { $0 === r }!] = fresh
                    done.append("started \(r.label) again")
                    begin(fresh)
                }
            }
            return "ok " + done.joined(separator: "; ")
        }
    }

    /// Stops the running rules that `matching` picks, saying `reason`, and starts each again
    /// with the rule `replacement` returns (nil: it stays stopped), so that nothing keeps using
    /// what another device changed (ForwardingSync.swift). The command does not go idle in
    /// between; the new listeners bind once the reactor has closed the old ones. [any-thread]
    func restart(where matching: @escaping @Sendable (ForwardRule) -> Bool, reason: String,
                 replacement: @escaping @Sendable (ForwardRule) -> ForwardRule?) {
        queue.async { [self] in
            guard !shuttingDown else { return }
            let hit = runtimes.filter { $0.state.hasIntent && matching($0.rule) }
            guard !hit.isEmpty else { return }
            starting += 1
            for r in hit { stop(r, reason: nil, because: reason) }
            reactor.post { [self] in
                queue.async { [self] in
                    defer { starting -= 1; checkIdle() }
                    guard !shuttingDown else { return }
                    for r in hit {
                        guard let rule = replacement(r.rule), let index = runtimes.firstIndex(where: { $0 === r }) else { continue }
                        let fresh = RuleRuntime(rule, scene: r.scene, keepsTrying: r.keepsTrying)
                        runtimes[index] = fresh
                        begin(fresh)
                    }
                }
            }
        }
    }

    /// Puts one rule to work: its listener now, its host's connection shared or opened. [queue]
    private func begin(_ runtime: RuleRuntime) {
        let rule = runtime.rule
        say(runtime, "starting (\(VisibleText.of(rule.host)) \(VisibleText.of(rule.sshArgument)))")
        do { _ = try rule.validated() } catch { return fail(runtime, VisibleText.of(error.message)) }
        if rule.kind != .remote {
            do {
                let listener = try LocalListener(reactor: reactor, host: rule.localBindHost, port: rule.bindPort) { [weak self, weak runtime] fd in
                    guard let self, let runtime else { Glibc.close(fd); return }
                    self.localAccepted(runtime, fd: fd)
                }
                listener.onExhausted = { [weak self, weak runtime] reason in
                    guard let self, let runtime else { return }
                    self.queue.async {
                        self.say(runtime, "cannot accept a connection: \(reason); this listener pauses \(Int(LocalListener.exhaustedPause * 1000)) ms at a time until a descriptor is free (the other rules go on)")
                    }
                }
                listener.onRecovered = { [weak self, weak runtime] in
                    guard let self, let runtime else { return }
                    self.queue.async { self.say(runtime, "accepting connections again") }
                }
                runtime.listener = listener
                reactor.post { listener.start() }
            } catch {
                fail(runtime, VisibleText.of(error.message))
                return
            }
        }
        let link = links[rule.host] ?? {
            let l = HostLink(host: rule.host, scene: runtime.scene, inFlight: inFlight)
            links[rule.host] = l
            return l
        }()
        link.rules.append(runtime)
        if link.connection != nil { attach(runtime, to: link) } else if !link.connecting && link.retry == nil { connect(link, interactive: true) }
    }

    /// Lets `forward stop|retry` reach this process; without it the rules still run. [queue]
    private func openControl() {
        guard control == nil else { return }
        do {
            control = try ControlSocket { [weak self] line in
                self?.control(line) ?? "none"
            }
        } catch {
            // Printed too: an unsafe run directory is the operator's to fix.
            let line = "forward: 'forward stop', 'retry' and 'list' cannot reach this process: \(VisibleText.of(error.message))"
            for owner in owners.values { owner.report(line) }
        }
    }

    /// A run was interrupted: every rule of its scene still meaning to run stops, in the
    /// order they were given, each printing `stopped`; the last one makes it idle. [any-thread]
    func stopAll(scene: UInt64) {
        queue.async { [self] in
            for r in runtimes where r.scene == scene && r.state.hasIntent { stop(r, reason: nil) }
            checkIdle()   // also when none was left running
        }
    }

    /// Stops every rule; bounded: connections close in parallel, at most `bound` seconds.
    func shutdown(bound: Double) {
        closingDown.store(true, ordering: .releasing)
        // First, and outside `queue`: a request in progress finishes (and is answered) on it.
        queue.sync { control }?.close()
        var closing: [(SSHTransport.Connection, Unmanaged<LossToken>?)] = []
        queue.sync {
            shuttingDown = true
            for link in links.values {
                link.retry?.cancel()
                if let c = link.connection { closing.append((c, link.token)) }
                link.connection = nil
                link.setCurrent(nil)
                for r in link.rules where r.state.hasIntent { stop(r, reason: nil) }
            }
            links = [:]
        }
        // In parallel across hosts; the group also holds calls still running, such as the
        // close of a connection whose last rule stopped just before: the host must not exit
        // (and tear down libcrypto) while one is inside libssh2.
        for (c, token) in closing {
            DispatchQueue.global().async(group: inFlight) {
                c.close()
                token?.release()
            }
        }
        if inFlight.wait(timeout: .now() + bound) == .timedOut {
            pluginHost.log(.warning, "forwarding: connections still closing after \(bound) s; left to the SSH plugin")
        }
        status.remove()
    }

    /// The process expired in background: retire transports, keep intent (NOTES §5).
    func expire() {
        queue.async { [self] in
            guard !shuttingDown else { return }
            expired = true
            for link in links.values {
                link.retry?.cancel()
                link.retry = nil
                retire(link)
                for r in link.rules where r.state.hasIntent { set(r, .paused) }
            }
        }
    }

    /// Back in foreground after expiry: bring paused rules back (prompts allowed again).
    func resume() {
        queue.async { [self] in
            guard expired, !shuttingDown else { return }
            expired = false
            for link in links.values where link.connection == nil && !link.connecting && !link.rules.isEmpty {
                connect(link, interactive: true)
            }
        }
    }

    // MARK: Rules on a connection [queue] (connecting and recovery: ForwardingManager+Connections)

    /// Puts a rule to work on the link's live connection.
    func attach(_ r: RuleRuntime, to link: HostLink) {
        guard let c = link.connection else { return }
        switch r.rule.kind {
        case .local, .dynamic:
            activate(r, "listening on \(VisibleText.of(ForwardSpec.bracketed(r.rule.localBindHost))):\(r.listener?.port ?? r.rule.bindPort)")
        case .remote:
            let context = SSHTransport.CallbackData(raw: Unmanaged.passRetained(RemoteAcceptContext(manager: self, runtime: r)).toOpaque())
            let generation = link.generation
            link.call { [self] in
                do {
                    let port = Int(try c.forwardListen(bindHost: r.rule.remoteBindHost, port: Int32(r.rule.bindPort),
                                                       onAccept: RemoteAcceptContext.onAccept, user: context))
                    queue.async {
                        guard r.state.hasIntent, link.generation == generation, link.connection != nil else { return }
                        r.remotePort = port
                        self.activate(r, "server listening on \(r.rule.remoteBindHost.isEmpty ? "*" : VisibleText.of(r.rule.remoteBindHost)):\(port)")
                    }
                } catch {
                    queue.async {
                        // A listen that failed because the connection just died is the loss
                        // handler's business; anything else (port taken on the server) is this rule's.
                        guard r.state.hasIntent, link.generation == generation, link.connection != nil,
                              !error.message.contains(" lost: "), !error.message.contains("not responding") else { return }
                        self.fail(r, VisibleText.of(error.message))
                    }
                }
            }
        }
    }

    private func activate(_ r: RuleRuntime, _ detail: String) {
        r.hasRun = true
        r.state = .active
        say(r, "active, \(detail)")
        writeStatus()
    }

    // MARK: Rule state [queue]

    func set(_ r: RuleRuntime, _ state: RuleState) {
        guard r.state != state else { return }
        r.state = state
        say(r, state.text(connections: r.connections.load(ordering: .relaxed)))
        writeStatus()
    }

    func fail(_ r: RuleRuntime, _ reason: String) {
        stop(r, reason: reason)
    }

    /// Ends a rule's intent: listener closed, its streams ended, remote listener cancelled;
    /// the last rule of a host releases the connection. Peers keep running.
    /// `because` is said with a plain stop (`stopped: because`).
    private func stop(_ r: RuleRuntime, reason: String?, because: String? = nil) {
        guard r.state.hasIntent else { return }
        r.state = reason.map { .failed($0) } ?? .stopped
        say(r, because.map { "stopped: \($0)" } ?? r.state.text(connections: 0))
        let listener = r.listener
        r.listener = nil
        reactor.post {
            listener?.close()
            r.pending.cancelAll()
            for pump in r.pumps.values { pump.cancel() }
            r.pumps = [:]
            // Their on_done takes them out of the count, quietly: they are no longer `splices`.
            for (stream, c) in r.splices { c.endSplice(stream) }
            r.splices = [:]
        }
        if let link = links[r.rule.host] {
            link.rules.removeAll { $0 === r }
            if let c = link.connection, let port = r.remotePort {
                link.call { try? c.cancelForward(port: Int32(port)) }
            }
            r.remotePort = nil
            if link.rules.isEmpty {
                link.retry?.cancel()
                link.retry = nil
                retire(link)
                links[link.host] = nil
            }
        }
        writeStatus()
        checkIdle()
    }

    private func checkIdle() {
        // Not during shutdown: the host exits with the signal's status, and a command returning
        // first would race it with 0.
        guard starting == 0 && !shuttingDown else { return }
        for (scene, owner) in owners where !runtimes.contains(where: { $0.scene == scene && $0.state.hasIntent }) { owner.onIdle() }
    }

    private func say(_ r: RuleRuntime, _ text: String) {
        owners[r.scene]?.report("\(r.label): \(text)")
    }

    /// A host connection's news, for every owner with a rule on it. [queue]
    func report(_ link: HostLink, _ text: String) {
        for scene in Set(link.rules.map(\.scene)) { owners[scene]?.report(text) }
    }

    // MARK: Status [queue]

    private var statusPending = false

    /// Coalesced: at most one write per 200 ms, however many streams come and go.
    func writeStatus() {
        guard !statusPending else { return }
        statusPending = true
        queue.asyncAfter(deadline: .now() + 0.2) { [self] in
            statusPending = false
            writeStatusFile()
        }
    }

    /// What `forward start` reports of a rule.
    struct RuleStatus {
        let text: String
        let starting: Bool
        let failed: Bool
    }

    /// The newest runtime of each rule in `ids`, by rule ID. [not on queue]
    func statuses(of ids: Set<String>) -> [String: RuleStatus] {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync {
            var found: [String: RuleStatus] = [:]
            // The daemon's own runtime of a rule (scene 0) is the one `forward start` reports.
            for r in runtimes.sorted(by: { ($0.scene == 0 ? 1 : 0) < ($1.scene == 0 ? 1 : 0) }) where ids.contains(r.rule.id) {
                let failed = if case .failed = r.state { true } else { false }
                found[r.rule.id] = RuleStatus(text: shown(r), starting: r.state == .starting, failed: failed)
            }
            return found
        }
    }

    /// Writes the status file now, not within the coalescing 200 ms: a `forward list` right
    /// after `forward start` returned must see what start said. [not on queue]
    func writeStatusNow() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync { writeStatusFile() }
    }

    /// [queue]
    private func writeStatusFile() {
        guard !shuttingDown else { return }
        status.write(runtimes.map { .init(id: $0.rule.id, name: $0.rule.name, state: shown($0)) })
    }

    /// A rule's state as `list` shows it: an active one also says where it listens (the port
    /// the kernel or the server picked for port 0). [queue]
    private func shown(_ r: RuleRuntime) -> String {
        let text = r.state.text(connections: r.connections.load(ordering: .relaxed))
        guard r.state == .active else { return text }
        switch r.rule.kind {
        case .local, .dynamic:
            return text + ", listening on \(ForwardSpec.bracketed(r.rule.localBindHost)):\(r.listener?.port ?? r.rule.bindPort)"
        case .remote:
            return text + ", server listening on \(r.rule.remoteBindHost.isEmpty ? "*" : r.rule.remoteBindHost):\(r.remotePort ?? r.rule.bindPort)"
        }
    }

    /// Every rule this process runs or ran (of one owner's, when given), with its state text.
    /// [not on queue]
    func snapshot(scene: UInt64? = nil) -> [(rule: ForwardRule, state: String)] {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync {
            runtimes.filter { scene == nil || $0.scene == scene }.map { ($0.rule, $0.state.text(connections: $0.connections.load(ordering: .relaxed))) }
        }
    }
}

extension Error {
    var message: String { (self as? ForwardError)?.message ?? (self as? PluginError)?.message ?? "\(self)" }
}
