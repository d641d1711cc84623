import Foundation
import Testing
import TestSupport

/// One config with every construct `hosts import` resolves (Include, Host lists and negation,
/// Match host/originalhost/user/localuser/all, first value wins, IdentityFile adding up with
/// `%` tokens, HostKeyAlias, CertificateFile, SendEnv with a take-back, SetEnv, ProxyJump,
/// ForwardAgent, ServerAlive*, an Include inside a Match, a SetEnv name given twice), compared field by field with what OpenSSH's `ssh -G` prints
/// for each concrete host.
@Suite struct ConfigImportMatchesSshGTests {
    @Test func everyFieldOfEveryHostIsWhatSshGPrints() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let me = NSUserName()
        _ = dir.write("home/.ssh/conf.d/bastion.conf", """
        Host bastion
          HostName 10.1.0.1
          Port 2022
          ForwardAgent yes

        """)
        // Host lines in a file included inside a Match: the Match's condition still holds after it.
        _ = dir.write("home/.ssh/conf.d/inner.conf", "Host nothing-here\n  User nobody\n")
        let config = dir.write("home/.ssh/config", """
        Include conf.d/*.conf
        Match originalhost app1 user \(me)
          User deploy
        Host app1 app2 !app3
          HostName %h.internal
          IdentityFile ~/.ssh/id_%r@%h
          ProxyJump bastion
          SendEnv APP_* LC_ALL
        Host app2
          HostKeyAlias app-fleet
          ServerAliveInterval 30
          SetEnv STAGE=two "NOTE=a b" STAGE=again
        Match host *.internal !localuser nobody-at-all
          CertificateFile ~/.ssh/%r-cert.pub
          Include conf.d/inner.conf
          Port 2200
        Host db
          HostName 10.2.0.5
          User postgres
          SetEnv STAGE=db
        Match user postgres
          ServerAliveCountMax 7
        Host *
          IdentityFile ~/.ssh/id_common
          SendEnv LANG LC_* -LC_ALL
          ServerAliveInterval 60
          ServerAliveCountMax 4
          ForwardAgent no

        """)
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        var compared = 0
        for name in ["bastion", "app1", "app2", "db"] {
            let g = try SshG(config: config, host: name, environment: h.environment)
            func all(_ key: String) -> [String] { g.all(key) }
            func one(_ key: String) -> String? { g.one(key) }
            let record = try h.savedHost(name)
            let context = "\(name):\n\(record)\nssh -G:\n\(g.output)"
            #expect(record["address"] as? String == one("hostname"), "\(context)")
            // No User anywhere: both connect as the local user (ssh -G prints it; the record leaves it unset).
            #expect(record["user"] as? String ?? me == one("user"), "\(context)")
            #expect((record["port"] as? Int).map(String.init) == one("port"), "\(context)")
            let files = [record["identityFile"] as? String].compactMap { $0 } + (record["moreIdentityFiles"] as? [String] ?? [])
            #expect(files == all("identityfile"), "\(context)")
            #expect(record["hostKeyAlias"] as? String == one("hostkeyalias"), "\(context)")
            #expect(record["certificateFile"] as? String == one("certificatefile"), "\(context)")
            #expect(record["sendEnv"] as? [String] ?? [] == all("sendenv"), "\(context)")
            #expect(record["setEnv"] as? [String] ?? [] == all("setenv"), "\(context)")
            #expect((record["jump"] as? [String])?.joined(separator: ",") == one("proxyjump"), "\(context)")
            #expect((record["forwardAgent"] as? Bool == true ? "yes" : "no") == one("forwardagent"), "\(context)")
            #expect((record["keepaliveInterval"] as? Int).map(String.init) == one("serveraliveinterval"), "\(context)")
            #expect((record["keepaliveCountMax"] as? Int).map(String.init) == one("serveralivecountmax"), "\(context)")
            compared += 1
        }
        #expect(compared == 4)
        // app3 is named only after '!': ssh has no block for it, and neither does the import.
        #expect(try h.termhost(["hosts", "show", "app3"]).status != 0)
    }
}
