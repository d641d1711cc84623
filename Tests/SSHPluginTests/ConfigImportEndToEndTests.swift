import Foundation
import Testing
import TestSupport

/// `termhost hosts import` of an OpenSSH client config.
@Suite struct ConfigImportEndToEndTests {
    @Test func importShowsAPreviewReportsUnknownDirectivesAndNeverRunsCommands() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let marker = dir.path + "/proxycommand-ran"
        _ = dir.write("home/.ssh/conf.d/extra.conf", "Host extra\n  HostName extra.example.com\n")
        let config = dir.write("home/.ssh/config", """
        Include conf.d/*.conf
        Host lab
          HostName 127.0.0.1
          Port \(h.server.port)
          IdentityFile \(h.key.privatePath)
        Host web
          HostName web.internal
          ProxyJump lab
        Host evil
          ProxyCommand touch \(marker)
        Match exec "touch \(marker)"
          User nobody
        Host *
          User \(NSUserName())
          ServerAliveInterval 15

        """)
        let refused = try h.termhost(["hosts", "import"])
        #expect(refused.status == 1, "without a terminal and without --yes nothing is imported")
        #expect(refused.stderr.contains("nothing imported"))
        #expect(try h.termhost(["hosts", "list"]).stdout.hasPrefix("No saved hosts"))

        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("  lab: \(NSUserName())@127.0.0.1:\(h.server.port) identity \(h.key.privatePath)\n"))
        #expect(r.stdout.contains("  web: \(NSUserName())@web.internal:22 via lab\n"))
        #expect(r.stdout.contains("  extra: \(NSUserName())@extra.example.com:22\n"))
        #expect(r.stderr.contains("warning: \(config):10: ProxyCommand is never executed by termhost; not imported"))
        #expect(r.stderr.contains("warning: \(config):11: Match blocks are not imported (Match exec would run a program)"))
        #expect(r.stderr.contains("warning: \(config):15: ServerAliveInterval is not supported; not imported"))
        #expect(!FileManager.default.fileExists(atPath: marker), "nothing from the config may run")
        #expect(r.stdout.hasSuffix("Imported 4 host(s).\n"))
        // The imported host works.
        #expect(try h.termhost(["exec", "lab", "--", "echo", "imported"]).stdout == "imported\n")
    }
}
