// The SFTP plugin: browse and transfer files over the SSH plugin's connections. It never
// connects, verifies host keys or authenticates itself: every connection comes from the
// transport service ("org.termhost.ssh.transport/1"), and libssh2's SFTP layer runs on it
// inside with_session.
import CTermhost
import Foundation
import TermhostSDK

final class SFTPFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.sftp", version: "0.1.0", displayName: "SFTP",
        summary: "Browse and transfer files: resumable, pipelined, atomic replace.",
        order: 200, requiresFeatures: ["org.termhost.ssh"],
        requiresServices: ["termhost.store/1", "termhost.interact/1", "org.termhost.ssh.transport/1"],
        providesServices: [TERMHOST_SFTP_FILES],
        commands: [Command("sftp", summary: "Browse and transfer files: termhost sftp HOST, sftp get|put|ls", usage: SFTPCommand.usage),
                   Command("transfers", summary: "Background transfers in the daemon: list, pause, resume, cancel", usage: TransfersCommand.usage)],
        tools: SFTPTools.all,
        // Each command's state is its own, and what commands share (the transfer queue, the
        // background transfers, the checkpoints) is locked: in the daemon `transfers` runs
        // beside another client's `sftp get`.
        concurrentCommands: true)

    let host: PluginHost
    /// The tool calls running now, for cancelTool (SFTPTools.swift).
    let toolCalls = ToolCalls()
    /// Pauses transfers to hosts another device changed (SFTPSync.swift).
    let sync: Events.Subscription?
    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        sync = SFTPSync.subscribe(host)
    }

    /// In the daemon, the background transfers the user wanted go on (never in the CLI).
    func activate() throws {
        FilesService.pluginHost = host
        if host.isDaemon, let context = BackgroundTransfers.context(host) { BackgroundTransfers.shared.restore(context) }
    }

    func service(_ id: String) -> UnsafeRawPointer? {
        id == TERMHOST_SFTP_FILES ? UnsafeRawPointer(FilesService.vtable) : nil
    }

    func run(_ command: CommandInvocation) -> Int32 {
        if command.command == "transfers" { return TransfersCommand(invocation: command, host: host).run() }
        guard let transport = SSHTransport(host: host) else {
            command.printError("termhost sftp: the SSH transport service is unavailable (is the SSH feature enabled? see termhost features)")
            return 1
        }
        return SFTPCommand(invocation: command, host: host, transport: transport).run()
    }

    /// Pauses every running transfer (partial files and checkpoints kept) within the host's
    /// shutdown bound, so `--resume` can continue them.
    func shutdown() {
        sync?.cancel()
        // Background ones first: none starts another run once the running ones pause.
        let deadline = Date().addingTimeInterval(2.5)
        BackgroundTransfers.shared.beginStopping()
        ActiveTransfers.shared.stopAll(.pause, within: 2.5)
        BackgroundTransfers.shared.stop(until: deadline)
        FilesService.closeAll()
    }
}

let plugin = Plugin(id: "org.termhost.sftp", version: "0.1.0", features: [SFTPFeature.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
