import TermhostDaemon
import TermhostRuntime
import TermhostSDK

/// A plugin's command that must run in the daemon (it called termhost.daemon/1's require and
/// returned at once) runs again there: the daemon is started when none runs (DaemonAutostart;
/// `--no-autostart` makes that an error saying how to start one), then RemoteCommand sends the
/// same command line to it, and its output and status are the user's.
enum DaemonRerun {
    static func run(_ argv: [String], _ g: GlobalOptions) -> Int32 {
        let shown = VisibleText.of(argv.prefix(2).joined(separator: " "))
        do throws(DaemonError) {
            _ = try DaemonAutostart.connect("termhost \(TermhostVersion.string) \(argv[0])", g, autostart: !g.noAutostart)
        } catch {
            Output.err("termhost: '\(shown)' runs in the daemon: \(error.description)")
            return ExitCode.failure
        }
        var why = "see its log, or 'termhost daemon status'"
        guard let status = RemoteCommand.run(argv, g, refused: { why = VisibleText.of($0) }) else {
            Output.err("termhost: '\(shown)' runs in the daemon, and the daemon did not take it: \(why)")
            return ExitCode.failure
        }
        return status
    }
}
