// termhost: the command-line front end. Built-in commands inspect the host without running
// plugin code in this process; anything else is a command contributed by a feature, run in
// this invocation's scene after the plugins are loaded.
import Foundation
import Glibc
import TermhostLoader
import TermhostRegistry
import TermhostRuntime

func runCLI() -> Int32 {
    var global: GlobalOptions
    var args: [String]
    do { (global, args) = try GlobalOptions.parse(Array(CommandLine.arguments.dropFirst())) } catch {
        Output.err("termhost: \(error)\nRun 'termhost help' for usage.")
        return ExitCode.usage
    }
    // A setting from the environment out of its range is an error, never a guess: a probe
    // timeout of 0 would quarantine every plugin, NaN would stop the deadline arithmetic.
    if let problem = ProbeRunner.environmentProblem() {
        Output.err("termhost: \(problem)")
        return ExitCode.usage
    }
    // `termhost help X` is `termhost X --help`.
    if args.first == "help" {
        args.removeFirst()
        if args.isEmpty { return help(global) }
        global.help = true
    }
    guard let command = args.first else { return help(global) }
    let rest = Array(args.dropFirst())
    let wantsHelp = global.help
    switch command {
    case "version" where wantsHelp:
        Output.out("usage: termhost version\nPrints the version.")
        return ExitCode.success
    case "version":
        Output.out("termhost \(TermhostVersion.string)")
        return ExitCode.success
    case "plugins":
        if wantsHelp { Output.out(PluginsCommand.usage); return ExitCode.success }
        return PluginsCommand.run(rest, global)
    case "features":
        if wantsHelp { Output.out("usage: termhost features [--json]\nEvery feature in start order, with its state and the reason."); return ExitCode.success }
        return FeaturesCommand.run(global)
    case "doctor":
        if wantsHelp { Output.out("usage: termhost doctor [--json]\nWhat loaded, what did not and why; exits 1 when it finds problems."); return ExitCode.success }
        return DoctorCommand.run(global)
    case "tools":
        if wantsHelp { Output.out(ToolsCommand.usage); return ExitCode.success }
        return ToolsCommand.run(rest, global)
    case "actions":
        if wantsHelp { Output.out(ActionsCommand.usage); return ExitCode.success }
        return ActionsCommand.list(rest, global)
    case "settings":
        if wantsHelp { Output.out(SettingsCommand.usage); return ExitCode.success }
        return SettingsCommand.run(rest, global)
    case "daemon":
        if wantsHelp { Output.out(DaemonCommand.usage); return ExitCode.success }
        return DaemonCommand.run(rest, global)
    case "sessions":
        if wantsHelp { Output.out(SessionsCommand.usage); return ExitCode.success }
        return SessionsCommand.run(rest, global)
    case "attach":
        if wantsHelp { Output.out(SessionsCommand.usage); return ExitCode.success }
        return SessionsCommand.attach(rest, global)
    case "ssh" where SessionsCommand.wantsPersist(rest):
        // A persistent session lives in the daemon: this process is only its client.
        if wantsHelp { Output.out(SessionsCommand.usage); return ExitCode.success }
        return SessionsCommand.persist(rest, global)
    case "call":
        if wantsHelp { Output.out(ActionsCommand.callUsage); return ExitCode.success }
        return ActionsCommand.call(rest, global)
    default:
        return pluginCommand(command, rest, global)
    }
}

func help(_ g: GlobalOptions) -> Int32 {
    var inspection = Inspection.run(g.runtimeOptions(), probe: false)
    inspection.closeDescriptors()
    Output.out(HelpText.general(inspection.resolution))
    return ExitCode.success
}

func pluginCommand(_ name: String, _ args: [String], _ g: GlobalOptions) -> Int32 {
    // With a daemon running, the command runs there, as a scene of this terminal.
    if !g.help, let status = RemoteCommand.run([name] + args, g) { return status }
    let runtime: HostRuntime
    var options = g.runtimeOptions()
    // The one front end that runs a command asking for the daemon again there (DaemonRerun),
    // unless the user asked for this process.
    options.daemon = .cli(rerunning: !g.inProcess)
    do { runtime = try HostRuntime.start(options) } catch {
        Output.err(error.description)
        return ExitCode.refusedToStart
    }
    for line in ReplacedRefusals.lines(runtime.records) { Output.err("termhost: warning: \(line) (see 'termhost doctor')") }
    guard let owner = runtime.resolution.commandOwners[name] else {
        let known = runtime.resolution.commandOwners.keys.sorted() + HelpText.builtIn.map(\.0)
        var message = "termhost: unknown command '\(name)'"
        var status = ExitCode.usage
        // Say why when a feature that is not running, or a plugin that was not loaded, declares it.
        if let f = runtime.resolution.features.first(where: { $0.descriptor.commands.contains { $0.name == name } }),
           let reason = f.state.reason {
            status = ExitCode.failure
            message = switch f.state {
            case .disabled: "termhost: command '\(name)' is unavailable: feature '\(f.descriptor.id)' is disabled: \(reason)"
            default: "termhost: command '\(name)' is unavailable: \(reason)"
            }
        } else if let r = runtime.records.first(where: { r in r.failure != nil && r.manifest?.features.contains { $0.commands?.contains { $0.name == name } ?? false } == true }) {
            status = ExitCode.failure
            message = "termhost: command '\(name)' is unavailable: \(r.label) was not loaded: \(r.failure!)"
        } else if let best = known.min(by: { UsageError.distance($0, name) < UsageError.distance($1, name) }),
                  UsageError.distance(best, name) <= 2 {
            message += ". Did you mean '\(best)'?"
        }
        Output.err(message + (status == ExitCode.usage ? "\nRun 'termhost help' for the list of commands." : ""))
        runtime.shutdown()
        return status
    }
    if g.help, let c = runtime.resolution.feature(owner)?.descriptor.commands.first(where: { $0.name == name }) {
        Output.out(c.usage ?? "usage: termhost \(name)\n\(c.summary)")
        runtime.shutdown()
        return ExitCode.success
    }
    let hasTerminal = !g.nonInteractive && isatty(0) == 1 && isatty(2) == 1
    // Prompts go to stderr, as ssh's do, so that a command's output can be piped.
    let scene = runtime.attachScene(terminal: hasTerminal ? .init(input: 0, output: 2) : nil)
    let signals = SignalMapping(runtime: runtime, scene: scene)
    let status = scene.run([name] + args, json: g.json) ?? ExitCode.failure
    if let sig = signals.terminatingSignal {
        // The command returned because a signal asked it to stop. The signal's thread is
        // shutting down, waiting for exactly that, and exits with 128 + the signal. exit() is
        // not safe to call from two threads at once, so this one waits for it (and only ends
        // the process itself, without atexit handlers, if that thread never does: it may wait
        // one bound for shutdown() and the command, and one for destroy()).
        sleep(UInt32(2 * runtime.options.shutdownBound) + 2)
        _exit(ExitCode.signal(sig))
    }
    withExtendedLifetime(signals) {}
    scene.detach()
    for message in runtime.shutdownProblems(runtime.shutdown()) { Output.err(message) }
    // The command asked to run in the daemon (termhost.daemon/1) and returned at once: run it
    // there, starting the daemon if none runs.
    if runtime.services.daemonRequests.asked(scene.id) { return DaemonRerun.run([name] + args, g) }
    return status
}

exit(runCLI())
