import CTermhost
import Foundation
import Glibc
import Synchronization
import TermhostDaemon
import TermhostRuntime
import TermhostSDK

/// `termhost daemon`: the long-lived host (Docs/Daemon.md). `run` (the default) runs it in the
/// foreground with its log on stderr, as systemd and a terminal both expect; `status` and `stop`
/// talk to the running one over its socket.
///
/// The daemon outlives the terminal it was started from: SIGHUP is logged and ignored; SIGTERM
/// and SIGINT stop it cleanly (clients told by their connection closing, the socket removed,
/// every feature shut down as at the end of any command).
enum DaemonCommand {
    static let usage = """
    usage: termhost daemon [run]            run the daemon in the foreground, its log on stderr
           termhost daemon status [--json]  whether a daemon runs, with its pid, socket and clients
           termhost daemon stop             ask the running daemon to stop, and wait until it has
    The socket is $XDG_RUNTIME_DIR/termhost/daemon.sock (without XDG_RUNTIME_DIR,
    /tmp/termhost-UID/daemon.sock); only your own user may connect to it.
    """

    static let spec = CommandArguments("termhost daemon", usage: usage, options: [.flag("--json")], maxArguments: 1)

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, spec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        let json = g.json || parsed.has("--json")
        switch parsed.arguments.first ?? "run" {
        case "run": return foreground(g)
        case "status": return status(json: json)
        case "stop": return stop()
        case let other:
            Output.err("termhost daemon: unknown subcommand '\(VisibleText.of(other))' (expected run, status or stop)\n\(usage)")
            return ExitCode.usage
        }
    }

    static func log(_ line: String) { Output.err("termhost daemon: \(line)") }

    static func foreground(_ g: GlobalOptions) -> Int32 {
        // Before any thread exists, so that every thread inherits the mask and only the signal
        // thread below ever takes these. The mask is set, not added to: whatever started the
        // daemon may have blocked other signals (systemd-socket-activate blocks nearly all),
        // which would keep SIGCHLD from the programs the daemon runs.
        var handled = sigset_t()
        sigemptyset(&handled)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&handled, s) }
        pthread_sigmask(SIG_SETMASK, &handled, nil)

        let listener: DaemonListener
        do {
            let passed = try SocketActivation.passedSocket().get()
            listener = try DaemonListener(DaemonAddress.standard(), inherited: passed)
        } catch {
            log(error.description)
            return ExitCode.refusedToStart
        }
        let runtime: HostRuntime
        var options = g.runtimeOptions()
        options.daemon = .daemon
        do { runtime = try HostRuntime.start(options) } catch {
            listener.close()
            log(error.description)
            return ExitCode.refusedToStart
        }
        let loaded = runtime.records.filter { $0.failure == nil }.compactMap { $0.manifest?.id }.sorted()
        // Persistent sessions come from whichever feature provides the service (the SSH plugin).
        let sessions = TerminalSessions(table: runtime.providedService(TERMHOST_SSH_SESSIONS))
        if sessions == nil { log("no persistent sessions: no running feature provides \(TERMHOST_SSH_SESSIONS) ('termhost features' says why)") }
        // The CLI's commands run here as scenes of the calling terminal (DaemonServer+Run).
        // One command at a time per plugin (the ABI's [main] promise), unless the command's
        // feature lets its commands overlap (concurrent_commands): those run side by side, but
        // never beside one of a feature that does not. A command refused runs in its client.
        let busy = runtime.commandSlots
        let runner = CommandRunner(admit: { [runtime] name in
            guard let plugin = runtime.commandPlugin(name) else {
                return .refused("no feature running in the daemon contributes '\(VisibleText.of(name))'")
            }
            let shared = runtime.commandRunsConcurrently(name)
            guard busy.take(plugin, shared: shared) else {
                return .refused("\(plugin) is running another command in the daemon")
            }
            return .admitted(release: { busy.give(plugin, shared: shared) })
        }, run: { [runtime] request, started in
            let streams = request.streams
            let scene = runtime.attachScene(terminal: request.interactive ? .init(input: streams.input, output: streams.error) : nil,
                                            stdio: SceneStdio(input: streams.input, output: streams.output, error: streams.error),
                                            environment: request.environment)
            defer { scene.detach() }
            guard started(scene.id) else { return ExitCode.failure }   // its client is gone: never ran
            // The admission took the plugin's slot for this thread's command.
            let plugin = runtime.commandPlugin(request.argv[0]) ?? ""
            return CommandSlots.holding(plugin) { scene.run(request.argv, json: request.json) } ?? ExitCode.failure
        }, cancel: { [runtime] scene in runtime.services.cancellation.cancel(scene: scene) },
           setBackground: { [runtime] scene, background in runtime.lifecycle.setScenePhase(scene, background ? .background : .active) })
        // Each persistent session is a scene: in background while no client is attached.
        let sessionScenes = Mutex<[String: HostScene]>([:])
        let hooks = SessionSceneHooks(opened: { [runtime] id in
            let scene = runtime.attachScene(terminal: nil)
            scene.setPhase(.background)
            sessionScenes.withLock { $0[id] = scene }
        }, clients: { id, count in
            sessionScenes.withLock { $0[id] }?.setPhase(count > 0 ? .active : .background)
        }, ended: { id in
            sessionScenes.withLock { $0.removeValue(forKey: id) }?.detach()
        })
        let server = DaemonServer(listener: listener, version: "termhost \(TermhostVersion.string)", sessions: sessions, runner: runner,
                                  sceneHooks: hooks, status: { [runtime] in
            ["plugins": loaded, "scenes": runtime.lifecycle.sceneIDs.count, "scenes_in_background": runtime.lifecycle.backgroundSceneCount,
             "phase": "\(runtime.lifecycle.phase)"]
        }, log: { log($0) })
        let waitedFor = handled
        let signals = Thread {
            var set = waitedFor
            while true {
                var signal: Int32 = 0
                guard sigwait(&set, &signal) == 0 else { continue }
                if signal == SIGHUP {
                    log("SIGHUP ignored: the daemon outlives the terminal it was started from ('termhost daemon stop' ends it)")
                    continue
                }
                log("stopping (\(signal == SIGTERM ? "SIGTERM" : "SIGINT"))")
                server.stop()
                return
            }
        }
        signals.start()
        log("listening on \(listener.address.socket)\(listener.ownsSocket ? "" : " (passed by systemd)") (pid \(getpid()), \(loaded.count) plugin(s) loaded)")
        server.run()
        listener.close()
        for message in runtime.shutdownProblems(runtime.shutdown()) { log(message) }
        log("stopped")
        return ExitCode.success
    }

    static func status(json: Bool) -> Int32 {
        let reply: [String: Any]
        do { reply = try DaemonClient(DaemonAddress.standard(), client: "termhost \(TermhostVersion.string) daemon status").request("status") } catch {
            if json { Output.out("{\"running\":false,\"error\":\(JSONText.quoted(error.description))}") } else { log(error.description) }
            return ExitCode.failure
        }
        if json {
            var object = reply
            object["running"] = true
            Output.out(String(decoding: DaemonProtocol.payload(object), as: UTF8.self))
            return ExitCode.success
        }
        let clients = (reply["clients"] as? [String]) ?? []
        Output.out("""
            termhost daemon: running, pid \(reply["pid"] as? Int ?? 0), up \(reply["uptime_seconds"] as? Int ?? 0) s
              socket:  \(VisibleText.of(reply["socket"] as? String ?? "?"))
              plugins: \(((reply["plugins"] as? [String]) ?? []).joined(separator: ", "))
              scenes:  \(reply["scenes"] as? Int ?? 0)
              clients: \(clients.count) (this one included)
            """)
        return ExitCode.success
    }

    static func stop() -> Int32 {
        let address = DaemonAddress.standard()
        let pid: Int
        do {
            let client = try DaemonClient(address, client: "termhost \(TermhostVersion.string) daemon stop")
            pid = client.welcome["pid"] as? Int ?? 0
            _ = try client.request("stop")
        } catch {
            log(error.description)
            return ExitCode.failure
        }
        // Stopped when its process has ended (a socket systemd made stays, for the next start).
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if pid <= 0 || kill(pid_t(pid), 0) != 0 {
                log("stopped (pid \(pid))")
                return ExitCode.success
            }
            usleep(50_000)
        }
        log("asked pid \(pid) to stop; it has not ended within 30 s")
        return ExitCode.failure
    }
}
