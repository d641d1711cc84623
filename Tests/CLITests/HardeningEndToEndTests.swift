import Foundation
import Testing
import TestSupport

/// Issue 12 through the `termhost` binary: what is refused, and how `doctor` and
/// `plugins list` explain it, while the other plugins go on loading.
@Suite struct HardeningEndToEndTests {
    @Test func doctorExplainsAPluginDirectoryOthersCanWriteAndTheRestRuns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let bad = try Fixtures.cPlugin(in: cli.plugins, dirName: "open", id: "org.test.open", defines: ["COMMAND_NAME=\"open\""])
        try Fixtures.helloC(in: cli.plugins)
        chmod(bad.directory, 0o777)
        let reason = "directory \(bad.directory) is writable by its group and others (mode 0777); refused: plugin files and every directory above them must be owned by root or by you and writable by no one else"
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  org.test.open 1.0.0: \(reason)"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("  - org.test.open 1.0.0: \(reason)"))
        #expect(!doctor.stdout.contains("No problems found"))
        #expect(try cli.run("plugins", "list").stdout.contains("org.test.open 1.0.0: \(reason)"))
        let check = try cli.run("plugins", "check", bad.directory)
        #expect(check.status == 1)
        #expect(check.stdout.contains("problem: \(reason)"))
        let open = try cli.run("open")
        #expect(open.status == 1)
        #expect(open.stderr.contains("termhost: command 'open' is unavailable: plugin 'org.test.open' (\(bad.directory)) was not loaded: \(reason)"))
        #expect(try cli.run("hello").status == 0)
    }

    /// Issue 27 item 13: a plugin refused in the first directory of the search path while a
    /// copy with its ID in the next directory loads: said on the command line of every command
    /// and in doctor, not only as the first copy's refusal.
    @Test func aRefusedPluginReplacedByACopyFromTheNextDirectoryIsSaid() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        let first = dir.sub("first"), second = dir.sub("second")
        cli.extraEnvironment["TERMHOST_PLUGIN_PATH"] = first + ":" + second
        let bad = try Fixtures.cPlugin(in: first, dirName: "open", id: "org.test.open", defines: ["COMMAND_NAME=\"open\""])
        let good = try Fixtures.cPlugin(in: second, dirName: "open", id: "org.test.open", defines: ["COMMAND_NAME=\"open\""])
        chmod(bad.directory, 0o777)
        let line = "plugin 'org.test.open' in \(bad.directory) was refused (directory \(bad.directory) is writable by its group and others (mode 0777)"
        let open = try cli.run("open")
        #expect(open.status == 0, "\(open.output)")
        #expect(open.stderr.contains("termhost: warning: \(line)"), "\(open.stderr)")
        #expect(open.stderr.contains("the copy in \(good.directory) is loaded instead (see 'termhost doctor')"), "\(open.stderr)")
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - \(line)"), "\(doctor.stdout)")
    }

    /// Issue 27 item 15: Termhost's files are private whatever the umask (a store made under
    /// umask 000 is 0600, its directory 0700); a store others can only read is tightened; one
    /// others can write is refused, naming the fix; Termhost's own known_hosts likewise.
    @Test func theStoreAndTermhostsKnownHostsArePrivateWhateverTheUmask() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.sshPlugin(in: cli.plugins)
        func termhost(_ args: String...) throws -> Shell.Result {
            try Shell.run("/bin/sh", ["-c", "umask 000; exec \"$0\" \"$@\"", Paths.termhost] + args, environment: cli.environment)
        }
        func mode(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1 }
        let store = dir.path + "/data/termhost/termhost.db"
        #expect(try termhost("hosts", "add", "web", "web.example.com").status == 0)
        #expect(mode(store) == 0o600 && mode(dir.path + "/data/termhost") == 0o700, "\(String(mode(store), radix: 8))")
        chmod(store, 0o644)
        chmod(dir.path + "/data/termhost", 0o755)
        #expect(try termhost("hosts", "list").stdout.contains("web.example.com"))
        #expect(mode(store) == 0o600 && mode(dir.path + "/data/termhost") == 0o700, "readable by others: tightened")
        chmod(store, 0o666)
        let refused = try termhost("hosts", "list")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("\(store) can be written by its group or others (mode 666): refused"), "\(refused.stderr)")
        #expect(refused.stderr.contains("run: chmod 600 \(store)"), "\(refused.stderr)")
        chmod(store, 0o600)
        let known = dir.write("data/termhost/known_hosts", "@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
        chmod(known, 0o666)
        let server = try SSHServer(in: dir, authorizedKeys: [])
        defer { server.stop() }
        #expect(try termhost("hosts", "add", "lab", "127.0.0.1", "--port", String(server.port)).status == 0)
        let exec = try termhost("exec", "lab", "--", "true")
        #expect(exec.stderr.contains("\(known) can be written by its group or others (mode 666): refused"), "\(exec.stderr)")
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root (CI runs the suite as root)"))
    func doctorExplainsALibraryOwnedByNobody() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let bad = try Fixtures.cPlugin(in: cli.plugins, dirName: "nob", id: "org.test.nob", defines: ["COMMAND_NAME=\"nob\""])
        try Fixtures.helloC(in: cli.plugins)
        #expect(chown(bad.library, 65534, 65534) == 0)
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - org.test.nob 1.0.0: \(bad.library) is owned by uid 65534"), "\(doctor.stdout)")
        #expect(try cli.run("hello").status == 0)
    }

    @Test func aProbeTimeoutOutOfRangeIsAnErrorNamingTheVariable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        for value in ["nan", "0", "-1", "inf", "1e9", "5s"] {
            cli.extraEnvironment = ["TERMHOST_PROBE_TIMEOUT": value]
            let r = try cli.run("doctor")
            #expect(r.status == 2, "\(value): \(r.output)")
            #expect(r.stderr == "termhost: TERMHOST_PROBE_TIMEOUT must be a number of seconds from 0.1 to 600, not '\(value)'\n")
        }
        cli.extraEnvironment = ["TERMHOST_PROBE_TIMEOUT": "2.5"]
        #expect(try cli.run("hello").status == 0)
        cli.extraEnvironment = [:]
        #expect(try cli.run("doctor").stdout.contains("No problems found."), "nothing was quarantined by the refused values")
    }

    @Test func oversizedManifestPolicyAndPluginSetAreRefusedNamingFileAndCap() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let big = try Fixtures.cPlugin(in: cli.plugins, dirName: "big", id: "org.test.big", defines: ["COMMAND_NAME=\"big\""])
        let padded = try String(contentsOfFile: big.manifest, encoding: .utf8) + String(repeating: " ", count: 1 << 20)
        try padded.write(toFile: big.manifest, atomically: false, encoding: .utf8)
        let list = try cli.run("plugins", "list")
        #expect(list.stdout.contains("\(big.manifest) is \(padded.utf8.count) bytes, more than the 1 MiB such a file may hold; refused"), "\(list.stdout)")
        let set = dir.write("system/termhost/plugins/plugin-set.json", "{}" + String(repeating: " ", count: 4 << 20))
        let doctor = try cli.run("doctor")
        #expect(doctor.stdout.contains("plugin set unusable, so the plugins beside it are refused: \(set) is \((4 << 20) + 2) bytes, more than the 4 MiB such a file may hold; refused"))
        let policy = cli.policy("{}" + String(repeating: " ", count: 1 << 20))
        let r = try cli.run("hello")
        #expect(r.status == 3)
        #expect(r.stderr.hasPrefix("\(policy) is \((1 << 20) + 2) bytes, more than the 1 MiB such a file may hold; refused\n"))
    }

    @Test func aFIFOInPlaceOfAPolicyOrALibraryNeverBlocksACommand() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let fifo = try Fixtures.cPlugin(in: cli.plugins, dirName: "fifo", id: "org.test.fifo", defines: ["COMMAND_NAME=\"fifo\""])
        unlink(fifo.library)
        #expect(mkfifo(fifo.library, 0o644) == 0)
        let doctor = try cli.run("doctor", timeout: 30)
        #expect(doctor.stdout.contains("  - org.test.fifo 1.0.0: \(fifo.library) is not a loadable plugin: it is a FIFO, not a regular file"), "\(doctor.output)")
        #expect(try cli.run("hello", timeout: 30).status == 0)
        let policy = dir.path + "/policy.json"
        #expect(mkfifo(policy, 0o644) == 0)
        let r = try cli.run("hello", timeout: 30)
        #expect(r.status == 3)
        #expect(r.stderr.hasPrefix("\(policy) is a FIFO, not a regular file; refused\n"))
    }

    @Test func aStoreWithANegativeSchemaVersionIsNamedNotACrash() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let store = dir.sub("data") + "/termhost/termhost.db"
        try FileManager.default.createDirectory(atPath: (store as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(try Shell.run("/usr/bin/sqlite3", [store, "PRAGMA user_version = -5; CREATE TABLE t (x);"]).status == 0)
        let problem = "the store \(store) has schema version -5, which no Termhost writes; it is not a Termhost store (left untouched)"
        // hello-c keeps its greeting count in the store, so it is unavailable and says why.
        let hello = try cli.run("hello")
        #expect(hello.status == 1, "\(hello.output)")
        #expect(hello.stderr.contains("termhost: host: error: \(problem)"))
        #expect(hello.stderr.contains("requires service 'termhost.store/1', which is unavailable: \(problem)"))
        let doctor = try cli.run("doctor")
        #expect(doctor.stdout.contains("  - \(problem)"), "\(doctor.stdout)")
    }

    @Test func aSecretsFileOthersCanReadIsNamedByTheHostWhateverThePluginSays() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        let id = try cli.run("svc", "secret-put", "hunter2").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let path = dir.path + "/data/termhost/secrets.json"
        chmod(path, 0o644)
        let get = try cli.run("svc", "secret-get", id)
        #expect(get.status == 1)
        let message = "Permissions 0644 for '\(path)' are too open. Secrets must be readable by their owner only; they are not used until you run: chmod 600 '\(path)'"
        #expect(get.stderr.contains("termhost: host: error: \(message)\n"), "\(get.stderr)")
        #expect(get.stderr.components(separatedBy: "termhost: host: error:").count == 2, "said once")
        chmod(path, 0o600)
        #expect(try cli.run("svc", "secret-get", id).stdout == "hunter2\n", "the refused file was kept as it was")
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root (CI runs the suite as root)"))
    func aPluginSetOwnedByAnotherUserRefusesThePluginsBesideIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        cli.extraEnvironment = ["TERMHOST_PLUGIN_PATH": ""]
        let system = dir.sub("system") + "/termhost/plugins"
        let hello = try Fixtures.helloC(in: system)
        let hash = try Shell.run("/usr/bin/sha256sum", [hello.library]).stdout.prefix(64)
        let set = dir.write("system/termhost/plugins/plugin-set.json", """
        { "name": "test", "version": "1", "plugins": [ { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "sha256": "\(hash)" } ] }
        """)
        #expect(try cli.run("hello").status == 0)
        #expect(chown(set, 65534, 65534) == 0)
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("plugin set unusable, so the plugins beside it are refused: \(set): \(set) is owned by uid 65534"), "\(doctor.stdout)")
        #expect(try cli.run("hello").status == 1)
    }
}

/// Issue 27 item 15 through the binary: Termhost's files and directories under the XDG
/// directories that an older Termhost left readable by others (0755, 0644: the store and its
/// -wal, the log, the probe cache) are made private at the next start; one that others could
/// write is refused with its path and the fix, and `doctor` says so without changing anything.
@Suite struct PrivateFilesEndToEndTests {
    func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    @Test func filesLeftReadableAreTightenedAndWritableOnesRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.sshPlugin(in: cli.plugins)
        #expect(try cli.run("hosts", "add", "web", "web.internal").status == 0)
        let data = dir.path + "/data/termhost", state = dir.path + "/state/termhost", cache = dir.path + "/cache/termhost"
        let files = [data + "/termhost.db", state + "/termhost.log", cache + "/probe-cache.json"]
        for path in files + [data + "/termhost.db-wal"] where FileManager.default.fileExists(atPath: path) { chmod(path, 0o644) }
        for path in [data, state, cache] { chmod(path, 0o755) }

        #expect(try cli.run("hosts", "list").stdout.contains("web.internal"))
        for path in [data, state, cache] { #expect(mode(path) == 0o700, "\(path): \(String(mode(path), radix: 8))") }
        for path in files { #expect(mode(path) == 0o600, "\(path): \(String(mode(path), radix: 8))") }

        // Writable by the group: refused with the path and the fix, reported by doctor.
        let wal = data + "/termhost.db-wal"
        if !FileManager.default.fileExists(atPath: wal) { _ = FileManager.default.createFile(atPath: wal, contents: nil) }
        chmod(wal, 0o664)
        let refused = try cli.run("hosts", "list")
        #expect(refused.status != 0 && refused.stderr.contains("\(wal) can be written by its group or others (mode 664)")
                && refused.stderr.contains("chmod 600 \(wal)"), "\(refused.output)")
        let doctor = try cli.run("doctor")
        #expect(doctor.stdout.contains("\(wal) can be written by its group or others"), "\(doctor.stdout)")
        #expect(mode(wal) == 0o664, "doctor changed a mode")
        chmod(wal, 0o600)

        let probeCache = cache + "/probe-cache.json"
        chmod(probeCache, 0o666)
        let set = try cli.run("doctor")
        #expect(set.stdout.contains("probe cache set aside, every plugin is probed again: \(probeCache) can be written by its group or others"), "\(set.stdout)")
        // Its directory too: whoever can write there can put a cache of their own in place.
        chmod(probeCache, 0o600)
        chmod(cache, 0o777)
        let directory = try cli.run("doctor")
        #expect(directory.stdout.contains("probe cache set aside, every plugin is probed again: \(cache) can be written by its group or others"), "\(directory.stdout)")
        chmod(cache, 0o700)
        let log = state + "/termhost.log"
        chmod(log, 0o622)
        let logRefused = try cli.run("hosts", "list")
        #expect(logRefused.stdout.contains("web.internal"), "\(logRefused.output)")
        #expect(logRefused.stderr.contains("not logging to a file: \(log) can be written by its group or others"), "\(logRefused.stderr)")
    }
}
