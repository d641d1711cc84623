import Foundation
import TestSupport

/// What most daemon tests start with: a scratch directory, the test's own sshd with the SSH
/// plugin (and SFTP's, or others, beside it), the operator policy when one is given, and a
/// daemon for that environment. `stop()`, in a defer, ends the daemon, then the server, then
/// removes the directory.
final class DaemonSetup {
    let dir: TemporaryDirectory
    let ssh: SSHHarness
    let daemon: DaemonHarness
    /// The plugins bundled beside the SSH plugin, by feature ID.
    let bundled: [String: Fixtures.Plugin]

    /// `plugins`: library file name → feature ID. `start`: false for a test that prepares the
    /// store first, or lets its first command start the daemon.
    init(_ label: String, sftp: Bool = false, plugins: [String: String] = [:], policy: String? = nil, start: Bool = true) throws {
        let dir = TemporaryDirectory(label)
        var started: (SSHHarness, DaemonHarness)?
        do {
            let ssh = sftp ? try SSHHarness.withSFTP(dir) : try SSHHarness(dir: dir)
            let daemon = DaemonHarness(environment: ssh.environment)
            started = (ssh, daemon)
            var bundled: [String: Fixtures.Plugin] = [:]
            for (library, id) in plugins { bundled[id] = try Fixtures.bundle(library, as: id, in: ssh.plugins) }
            if let policy { _ = dir.write("policy.json", policy) }
            if start { try daemon.start() }
            (self.dir, self.ssh, self.daemon, self.bundled) = (dir, ssh, daemon, bundled)
        } catch {
            if let (ssh, daemon) = started {
                daemon.stop()
                daemon.remove()
                ssh.server.stop()
            }
            dir.remove()
            throw error
        }
    }

    func stop() {
        daemon.stop()
        daemon.remove()
        ssh.server.stop()
        dir.remove()
    }
}
