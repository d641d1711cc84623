import Foundation
import Testing
import TestSupport

/// `termhost hosts import` of an OpenSSH client config.
@Suite struct ConfigImportEndToEndTests {
    /// A wildcard block is saved as a template: a name typed later that it matches connects as
    /// `ssh NAME` would (`%h` is the name), the most specific template winning over `Host *`.
    @Test func aWildcardBlockIsATemplateForTheNamesItMatches() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let config = dir.write("home/.ssh/config", """
        Host 127.0.0.*
          HostName %h
        Host web-*
          HostName 127.0.0.1
        Host *
          Port \(h.server.port)
          User \(NSUserName())
          IdentityFile \(h.key.privatePath)

        """)
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0 && r.stdout.hasSuffix("Imported 0 host(s) and 3 template(s).\n"), "\(r.output)")
        #expect(r.stdout.contains("  web-*: \(NSUserName())@127.0.0.1:\(h.server.port) identity \(h.key.privatePath) (template: for any name it matches)"), "\(r.stdout)")
        for name in ["web-7", "127.0.0.1"] {
            let g = try SshG(config: config, host: name, environment: h.environment)
            #expect(g.one("hostname") == "127.0.0.1" && g.one("port") == String(h.server.port), "ssh -G \(name): \(g.output)")
            let e = try h.termhost(["exec", name, "--", "echo", "via", name])
            #expect(e.status == 0 && e.stdout == "via \(name)\n", "\(name): \(e.output)")
        }
        // An ad-hoc user@host:port is taken as typed, never through a template.
        let adHoc = try h.termhost(["exec", "nobody-here@127.0.0.1:1", "--", "true"])
        #expect(adHoc.status == 255 && adHoc.stderr.contains("port 1"), "\(adHoc.output)")
    }

    /// Every IdentityFile of every matching block is kept, in ssh -G's order, and tried in turn.
    @Test func everyIdentityFileIsKeptAndTriedInOrder() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        _ = try UserKey(in: h.home + "/.ssh", name: "wrong_key", type: "ed25519")
        let config = dir.write("home/.ssh/config", """
        Host lab
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(NSUserName())
          IdentityFile ~/.ssh/wrong_key
        Host lab other
          IdentityFile ~/.ssh/missing_key
        Host *
          IdentityFile \(h.key.privatePath)
          IdentityFile ~/.ssh/wrong_key

        """)
        let files = try SshG(config: config, host: "lab", environment: h.environment).all("identityfile")
        #expect(files == ["~/.ssh/wrong_key", "~/.ssh/missing_key", h.key.privatePath], "\(files)")
        #expect(try h.termhost(["hosts", "import", config, "--yes"]).status == 0)
        let record = try h.savedHost("lab")
        let kept = [record["identityFile"] as? String].compactMap { $0 } + (record["moreIdentityFiles"] as? [String] ?? [])
        #expect(kept == files, "\(record)")
        let r = try h.termhost(["exec", "lab", "--", "echo", "third key"])
        #expect(r.status == 0 && r.stdout == "third key\n", "\(r.output)")
        // Saved by hand the same way: --add-identity appends, an empty value clears.
        try h.termhost(["hosts", "edit", "lab", "--add-identity", ""])
        let first = try h.termhost(["exec", "lab", "--", "true"])
        #expect(first.status == 255 && first.stderr.contains("Permission denied"), "only the wrong key is left: \(first.output)")
        try h.termhost(["hosts", "edit", "lab", "--add-identity", h.key.privatePath])
        #expect(try h.termhost(["exec", "lab", "--", "true"]).status == 0)
    }

    /// Match host, originalhost, user, localuser and all are evaluated in file order with what
    /// is resolved so far, as ssh does: user, port and HostName come out as `ssh -G` prints
    /// them for every host. A Match exec is never run, and says so.
    @Test func matchBlocksResolveAsSshGResolvesThem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let me = NSUserName()
        // Each host takes a different path through the blocks (ssh -G: alias1 fromalias@web1:2204,
        // web2 admin@web2:2202, web3 deploy@web3:2204, db1 admin@db1:2299).
        let body = """
        Match host web* user admin
          Port 2200
        Host alias1
          HostName web1.example.com
        Host web2
          User admin
          HostName web2.example.com
        Host web3
          HostName web3.example.com
        Match originalhost alias1
          User fromalias
        Match host web2.example.com user admin
          Port 2202
        Match host web3*,!web3.example.com
          Port 2203
        Match user deploy
          Port 2201
        Match localuser \(me) !originalhost db*
          Port 2204
        Host db1
          User admin
        Match all
          Port 2299
        Host *
          User deploy

        """
        let config = dir.write("home/.ssh/config", body)
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        var seen: [String] = []
        for name in ["alias1", "web2", "web3", "db1"] {
            let g = try SshG(config: config, host: name, environment: h.environment)
            let record = try h.savedHost(name)
            #expect(record["user"] as? String == g.one("user"), "\(name): \(record)\n\(g.output)")
            #expect((record["port"] as? Int).map(String.init) == g.one("port"), "\(name): \(record)")
            #expect(record["address"] as? String == g.one("hostname"), "\(name): \(record)")
            seen.append("\(record["user"] as? String ?? "-")@\(record["address"] as? String ?? "-"):\(record["port"] as? Int ?? 0)")
        }
        #expect(seen == ["fromalias@web1.example.com:2204", "admin@web2.example.com:2202", "deploy@web3.example.com:2204", "admin@db1:2299"], "\(seen)")
        let exec = dir.write("home/.ssh/exec-config", "Match exec \"true\"\n  Port 9999\nHost lab\n  HostName 127.0.0.1\n")
        let e = try h.termhost(["hosts", "import", exec, "--yes", "--replace"])
        #expect(e.stderr.contains("\(exec):1: Match exec would run a program, which termhost never does; the block applies to no host"), "\(e.output)")
        #expect(try h.termhost(["hosts", "show", "lab"]).stdout.contains("\"port\" : 22"), "never run: its Port does not apply")
    }

    /// IdentityFile keeps ssh's `%` tokens as written, and they are expanded when connecting;
    /// a token termhost does not expand names itself.
    @Test func identityFileTokensAreExpandedWhenConnecting() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let me = NSUserName()
        let tokenized = h.home + "/.ssh/key_\(me)_127.0.0.1_\(h.server.port)_lab"
        try FileManager.default.moveItem(atPath: h.key.privatePath, toPath: tokenized)
        try FileManager.default.moveItem(atPath: h.key.privatePath + ".pub", toPath: tokenized + ".pub")
        let config = dir.write("home/.ssh/config", """
        Host lab
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(me)
          IdentityFile %d/.ssh/key_%r_%h_%p_%n
        Host odd
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(me)
          IdentityFile ~/.ssh/key_%C
        Host viaenv unset nouser
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(me)
        Host viaenv
          IdentityFile ${TERMHOST_T_KEYS}/key_%r_%h_%p_lab
        Host unset
          IdentityFile ${TERMHOST_T_UNSET}/key
        Host nouser
          IdentityFile ~no-such-user-here/.ssh/key

        """)
        #expect(try h.termhost(["hosts", "import", config, "--yes"]).status == 0)
        #expect(try h.termhost(["hosts", "show", "lab"]).stdout.contains("%d/.ssh/key_%r_%h_%p_%n"), "stored as written")
        let r = try h.termhost(["exec", "lab", "--", "echo", "in"])
        #expect(r.status == 0 && r.stdout == "in\n", "\(r.output)")
        let odd = try h.termhost(["exec", "odd", "--", "true"])
        #expect(odd.status == 255 && odd.stderr.hasPrefix("Identity file ~/.ssh/key_%C: the token %C is not one termhost expands"), "\(odd.output)")
        // ${VARIABLE} is the user's variable; an unset one and an unknown ~user name themselves.
        var withKeys = h
        withKeys.extraEnvironment["TERMHOST_T_KEYS"] = h.home + "/.ssh"
        let viaEnv = try withKeys.termhost(["exec", "viaenv", "--", "echo", "in"])
        #expect(viaEnv.status == 0 && viaEnv.stdout == "in\n", "\(viaEnv.output)")
        let unset = try h.termhost(["exec", "unset", "--", "true"])
        #expect(unset.stderr.hasPrefix("Identity file ${TERMHOST_T_UNSET}/key: the variable TERMHOST_T_UNSET is not set; skipped"), "\(unset.output)")
        let nouser = try h.termhost(["exec", "nouser", "--", "true"])
        #expect(nouser.stderr.hasPrefix("Identity file ~no-such-user-here/.ssh/key: no user 'no-such-user-here' on this machine; skipped"), "\(nouser.output)")
    }

    /// SendEnv (every matching block's, `-PATTERN` applied), SetEnv (the first line, whole) and
    /// CertificateFile come out as `ssh -G` resolves them, and the imported host sends them.
    @Test func sendEnvSetEnvAndCertificateFileAreImportedAsSshGResolvesThem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var h = try SSHHarness(dir: dir, serverConfig: "AcceptEnv APP_* FOO QUOTED LANG LC_*\n")
        defer { h.server.stop() }
        let config = dir.write("home/.ssh/config", """
        Host web
          HostName 127.0.0.1
          Port \(h.server.port)
          User \(NSUserName())
          IdentityFile \(h.key.privatePath)
          SendEnv APP_* LC_ALL
          SetEnv FOO=bar "QUOTED=a b"
          CertificateFile ~/.ssh/web-cert.pub
        Host web
          SetEnv IGNORED=1
          SendEnv -APP_X -LC_ALL
        Host *
          SendEnv LANG LC_*
          SetEnv ALSO=ignored

        """)
        let g = try SshG(config: config, host: "web", environment: h.environment)
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        let record = try h.savedHost("web")
        #expect(record["sendEnv"] as? [String] == g.all("sendenv"), "\(record)\n\(g.output)")
        #expect(record["setEnv"] as? [String] == g.all("setenv"), "\(record)")
        #expect(record["certificateFile"] as? String == g.one("certificatefile"), "\(record)")
        #expect(g.all("sendenv") == ["APP_*", "LANG", "LC_*"] && g.all("setenv") == ["FOO=bar", "QUOTED=a b"], "ssh -G itself: \(g.output)")
        h.extraEnvironment = ["APP_ONE": "1", "LC_ALL": "C"]
        let env = try h.termhost(["exec", "web", "--", "env | grep -E '^(APP_|FOO|QUOTED|LC_ALL|IGNORED|ALSO)' | sort"])
        #expect(env.status == 0 && env.stdout == "APP_ONE=1\nFOO=bar\nLC_ALL=C\nQUOTED=a b\n", "\(env.output)")
    }

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
          Compression yes

        """)
        let refused = try h.termhost(["hosts", "import"])
        #expect(refused.status == 1, "without a terminal and without --yes nothing is imported")
        #expect(refused.stderr.contains("nothing imported"))
        #expect(try h.termhost(["hosts", "list"]).stdout.hasPrefix("No saved hosts"))

        try h.termhost(["hosts", "add", "extra", "keep.example.com"])
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stderr.contains("warning: 'extra' is already saved; kept as it is (use --replace to overwrite)"))
        #expect(try h.termhost(["hosts", "show", "extra"]).stdout.contains("keep.example.com"))
        #expect(r.stdout.contains("  web: \(NSUserName())@web.internal:22 via lab; not carried: Compression\n"), "\(r.stdout)")
        #expect(r.stderr.contains("warning: \(config):10: ProxyCommand is never executed by termhost; not imported"))
        #expect(r.stderr.contains("warning: \(config):11: Match exec would run a program, which termhost never does; the block applies to no host and its lines are skipped"), "\(r.stderr)")
        #expect(r.stderr.contains("warning: \(config):16: Compression is not supported; not imported"), "\(r.stderr)")
        // What is not carried is listed again for each host it applied to.
        #expect(r.stdout.contains("  evil: \(NSUserName())@evil:22; not carried: ProxyCommand, Compression\n"), "\(r.stdout)")
        #expect(r.stdout.contains("  lab: \(NSUserName())@127.0.0.1:\(h.server.port) identity \(h.key.privatePath); not carried: Compression\n"), "\(r.stdout)")
        #expect(try h.termhost(["hosts", "show", "lab"]).stdout.contains("\"keepaliveInterval\" : 15"), "ServerAliveInterval is carried")
        #expect(!FileManager.default.fileExists(atPath: marker), "nothing from the config may run")
        #expect(r.stdout.hasSuffix("Imported 3 host(s) and 1 template(s).\n"), "\(r.stdout)")
        // The imported host works.
        #expect(try h.termhost(["exec", "lab", "--", "echo", "imported"]).stdout == "imported\n")
    }
}

@Suite struct IdentitiesEndToEndTests {
    @Test(.enabled(if: PasswordEndToEndTests.available))
    func aSavedIdentityLogsInWithItsPasswordFromTheSecretsStoreWithoutAPrompt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, authorize: false, serverConfig: "UsePAM yes\nPasswordAuthentication yes\nKbdInteractiveAuthentication no\n")
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "identities", "add", "ops", "--user", PasswordEndToEndTests.user, "--password"],
                                  environment: h.environment)
        defer { tty.close() }
        tty.waitFor("Password for identity 'ops':")
        tty.type(PasswordEndToEndTests.password)
        #expect(tty.waitFor("[exit").contains("Saved identity 'ops' (password kept in the secrets store)."))
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--use-identity", "ops"])
        let r = try h.termhost(["exec", "lab", "--", "id", "-un"])
        #expect(r.stdout == "\(PasswordEndToEndTests.user)\n", "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        let shown = try h.termhost(["identities", "show", "ops"]).stdout
        #expect(shown.contains("\"hasPassword\" : true") && !shown.contains("sec_"))
        let db = FileManager.default.contents(atPath: dir.path + "/data/termhost/termhost.db") ?? Data()
        let wal = FileManager.default.contents(atPath: dir.path + "/data/termhost/termhost.db-wal") ?? Data()
        #expect((db + wal).range(of: Data(PasswordEndToEndTests.password.utf8)) == nil, "the password lives in the secrets file only")
        #expect(try h.termhost(["identities", "rm", "ops"]).status == 0)
        let orphan = try h.termhost(["exec", "lab", "--", "true"])
        #expect(orphan.stderr.contains("host 'lab' uses identity 'ops', which does not exist"))
    }

    @Test func hostsEditChangesOnlyWhatIsGiven() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "lab", "10.0.0.1", "--port", String(h.server.port), "--user", NSUserName()])
        let edit = try h.termhost(["hosts", "edit", "lab", "--address", "127.0.0.1"])
        #expect(edit.stdout == "Saved host 'lab' (\(NSUserName())@127.0.0.1:\(h.server.port)).\n")
        #expect(try h.termhost(["exec", "lab", "--", "echo", "edited"]).stdout == "edited\n")
        #expect(try h.termhost(["hosts", "edit", "nope", "--port", "1"]).status == 1)
    }
}

@Suite struct StoredKeyEndToEndTests {
    @Test func anIdentityCanKeepItsPrivateKeyInTheSecretsStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let add = try h.termhost(["identities", "add", "deploy", "--user", NSUserName(), "--store-key", h.key.privatePath])
        #expect(add.stdout == "Saved identity 'deploy' (key kept in the secrets store).\n", "\(add.stderr)")
        let keyText = try String(contentsOfFile: h.key.privatePath, encoding: .utf8)
        // The file is gone: only the stored copy can log in now.
        try FileManager.default.removeItem(atPath: h.key.privatePath)
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--use-identity", "deploy"])
        let r = try h.termhost(["exec", "lab", "--", "echo", "stored-key"])
        #expect(r.stdout == "stored-key\n", "\(r.stderr)")
        let body = keyText.split(separator: "\n")[1]   // a line of the key's base64
        let db = (FileManager.default.contents(atPath: dir.path + "/data/termhost/termhost.db") ?? Data())
            + (FileManager.default.contents(atPath: dir.path + "/data/termhost/termhost.db-wal") ?? Data())
        #expect(db.range(of: Data(body.utf8)) == nil, "the key lives in the secrets file only")
        #expect(try h.termhost(["identities", "list"]).stdout == "deploy  user \(NSUserName()), key stored\n")
        let edit = try h.termhost(["identities", "edit", "deploy", "--user", "someone-else"])
        #expect(edit.status == 0)
        #expect(try h.termhost(["identities", "show", "deploy"]).stdout.contains("\"user\" : \"someone-else\""))
    }
}
