import Foundation
import Testing
import TestSupport

/// The second device of an identity whose key stayed on the first (stored keys never sync), on
/// the real binary against a real sshd that takes only that key: the refusal names the
/// identity and the command that fixes it, in `exec`, `ssh`, `sftp`, and the forward and
/// metrics status lines, and after it the host works there too.
@Suite struct IdentityElsewhereEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.path + "/vault" }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
        _ = try Fixtures.bundle("libSFTPPlugin.so", as: "org.termhost.sftp", in: shared.sub("plugins"))
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: shared.sub("plugins"))
    }


    @Test func aRefusalNamesTheIdentityWhoseKeyIsOnAnotherDevice() throws {
        defer { shared.remove() }
        let key = try UserKey(in: shared.sub("keys"), name: "ops")
        let server = try SSHServer(in: shared, authorizedKeys: [key.publicLine])
        defer { server.stop() }
        let a = TermhostDevice(plugins: plugins), b = TermhostDevice(plugins: plugins)
        for d in [a, b] {
            let ssh = d.dir.sub("home/.ssh")
            #expect(FileManager.default.createFile(atPath: ssh + "/known_hosts", contents: Data((server.knownHostsLine + "\n").utf8)))
        }
        #expect(try a.runWithoutAgent("sync", "backend", "set", "folder", vault, "--create").status == 0)
        #expect(try b.runWithoutAgent("sync", "backend", "set", "folder", vault).status == 0)
        #expect(try a.runWithoutAgent("identities", "add", "ops", "--user", NSUserName(), "--store-key", key.privatePath).status == 0)
        let added = try a.runWithoutAgent("hosts", "add", "web", "127.0.0.1", "--port", String(server.port), "--use-identity", "ops")
        #expect(added.status == 0, "\(added.output)")
        #expect(try a.runWithoutAgent("exec", "web", "--", "echo", "from-a").stdout == "from-a\n")
        #expect(try a.runWithoutAgent("sync", "now").status == 0)
        #expect(try b.runWithoutAgent("sync", "now").status == 0)

        #expect(try b.runWithoutAgent("identities", "list").stdout.contains("key stored on another device, not here"))
        #expect(try b.runWithoutAgent("identities", "show", "ops").stdout.contains("\"keyElsewhere\" : true"))
        let refused = try b.runWithoutAgent("exec", "web", "--", "echo", "from-b")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Permission denied"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Identity 'ops' has a stored key on another device but not on this one")
                && refused.stderr.contains("termhost identities edit ops --store-key FILE"), "\(refused.stderr)")

        let hint = "Identity 'ops' has a stored key on another device but not on this one"
        let fix = "termhost identities edit ops --store-key FILE"
        let ssh = try b.runWithoutAgent("ssh", "web", "echo", "from-b")
        #expect(ssh.status != 0 && ssh.stderr.contains(hint) && ssh.stderr.contains(fix), "ssh: \(ssh.output)")
        let sftp = try b.runWithoutAgent("sftp", "ls", "web:/")
        #expect(sftp.status != 0 && sftp.stderr.contains(hint) && sftp.stderr.contains(fix), "sftp: \(sftp.output)")
        let metrics = try b.runWithoutAgent("metrics", "show", "web")
        #expect(metrics.status != 0 && metrics.output.contains(hint) && metrics.output.contains(fix), "metrics: \(metrics.output)")
        // forward run ends (status 1) when authentication failed: no rule is left to retry.
        let forward = try b.runWithoutAgent("forward", "run", "web", "-L", "0:127.0.0.1:9")
        #expect(forward.status != 0 && forward.output.contains(hint) && forward.output.contains(fix), "forward: \(forward.output)")

        #expect(try b.runWithoutAgent("identities", "edit", "ops", "--store-key", key.privatePath).status == 0)
        let fixed = try b.runWithoutAgent("exec", "web", "--", "echo", "from-b")
        #expect(fixed.stdout == "from-b\n", "\(fixed.output)")
    }
}
