// termhost: the command-line front end. Built-in commands inspect the host without running
// plugin code in this process; anything else is a command contributed by a feature, run in
// this invocation's scene after the plugins are loaded.
import Foundation
import Glibc
import TermhostRegistry
import TermhostRuntime
import TermhostServices

func runCLI() -> Int32 {
    let global: GlobalOptions
    var args: [String]
    do { (global, args) = try GlobalOptions.parse(Array(CommandLine.arguments.dropFirst())) } catch {
        Output.err("termhost: \(error)\nRun 'termhost help' for usage.")
        return ExitCode.usage
    }
    if args.first == "help" { args.removeFirst(); if args.isEmpty { return help(global) } else { args.append("--help") } }
    guard let command = args.first else { return help(global) }
    let rest = Array(args.dropFirst())
    let wantsHelp = global.help
    switch command {
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
    let runtime: HostRuntime
    do { runtime = try HostRuntime.start(g.runtimeOptions()) } catch {
        Output.err(error.description)
        return ExitCode.refusedToStart
    }
    guard let owner = runtime.resolution.commandOwners[name] else {
        let known = HelpText.builtIn.map(\.0) + Array(runtime.resolution.commandOwners.keys)
        var message = "termhost: unknown command '\(name)'"
        // Say why when a disabled or unavailable feature declares it.
        if let f = runtime.resolution.features.first(where: { $0.descriptor.commands.contains { $0.name == name } }),
           let reason = f.state.reason {
            message = "termhost: command '\(name)' is unavailable: feature '\(f.descriptor.id)' is \(f.state.label): \(reason)"
        } else if let best = known.min(by: { UsageError.distance($0, name) < UsageError.distance($1, name) }),
                  UsageError.distance(best, name) <= 2 {
            message += ". Did you mean '\(best)'?"
        }
        Output.err(message + "\nRun 'termhost help' for the list of commands.")
        runtime.shutdown()
        return ExitCode.usage
    }
    if g.help, let c = runtime.resolution.feature(owner)?.descriptor.commands.first(where: { $0.name == name }) {
        Output.out(c.usage ?? "usage: termhost \(name)\n\(c.summary)")
        runtime.shutdown()
        return ExitCode.success
    }
    let hasTerminal = !g.nonInteractive && isatty(0) == 1 && isatty(2) == 1
    let scene = runtime.lifecycle.attachScene(hasTerminal: hasTerminal)
    runtime.services.interaction.attach(scene: scene, terminal: hasTerminal ? .init(input: 0, output: 2) : nil)
    let signals = SignalMapping(runtime: runtime, scene: scene)
    let status = runtime.runCommand(scene: scene, argv: [name] + args, json: g.json) ?? ExitCode.failure
    withExtendedLifetime(signals) {}
    runtime.lifecycle.detachScene(scene)
    let outcome = runtime.shutdown()
    if outcome.boundExpired {
        Output.err("termhost: shutdown did not finish within \(runtime.options.shutdownBound) s (still running: \(outcome.abandoned.joined(separator: ", "))); exiting anyway")
    }
    return status
}

exit(runCLI())
