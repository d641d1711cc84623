import Foundation
import Testing
import TestSupport

/// The plugin set pins the libssh2 that ships beside the plugins (Scripts/stage.sh): the loader
/// checks its sha256 on the descriptor it then loads, so a changed or missing copy refuses the
/// SSH plugin, naming the file, and an unchanged one is the very file the process maps.
@Suite struct PinnedLibSSH2EndToEndTests {
    /// A distribution laid out in the system plugin directory (`$XDG_DATA_DIRS/termhost`): the
    /// SSH plugin, a copy of the libssh2 it was linked with in `libssh2/`, and a plugin set
    /// pinning both (the library as `../libssh2/libssh2.so.1`, as stage.sh writes it).
    struct Staged {
        var harness: SSHHarness
        let library: String
        let set: String
        let pluginVersion: String
        let librarySHA256: String
    }

    static func stage(_ dir: TemporaryDirectory) throws -> Staged {
        var h = try SSHHarness(dir: dir)
        h.extraEnvironment["TERMHOST_PLUGIN_PATH"] = ""
        let root = dir.sub("system") + "/termhost"
        let ssh = try Fixtures.sshPlugin(in: root + "/plugins")
        let ldd = try Shell.run("/usr/bin/ldd", [ssh.library]).stdout
        let linked = try #require(ldd.split(separator: "\n").first { $0.contains("libssh2.so.1 => ") }?
            .components(separatedBy: "=> ").last?.components(separatedBy: " (").first, "\(ldd)")
        let library = dir.sub("system/termhost/libssh2") + "/libssh2.so.1"
        // The bytes, not the link (libssh2.so.1 -> libssh2.so.1.0.1).
        try Data(contentsOf: URL(fileURLWithPath: linked)).write(to: URL(fileURLWithPath: library))
        chmod(library, 0o644)
        let manifest = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ssh.manifest))) as? [String: Any])
        let version = try #require(manifest["version"] as? String)
        let librarySHA256 = Self.sha256(library), pluginSHA256 = Self.sha256(ssh.library)
        let set = dir.write("system/termhost/plugins/plugin-set.json", """
        { "name": "staged", "version": "1", "plugins": [ { "id": "org.termhost.ssh", "version": "\(version)", "sha256": "\(pluginSHA256)",
          "libraries": [ { "path": "../libssh2/libssh2.so.1", "sha256": "\(librarySHA256)" } ] } ] }
        """)
        return Staged(harness: h, library: library, set: set, pluginVersion: version, librarySHA256: librarySHA256)
    }

    static func sha256(_ path: String) -> String {
        String(((try? Shell.run("/usr/bin/sha256sum", [path]).stdout) ?? "").prefix(64))
    }

    /// The files named libssh2.so* that process `pid` maps.
    static func mappedLibSSH2(_ pid: Int32) -> Set<String> {
        // procfs reports size 0: read it through cat, to the end.
        let maps = (try? Shell.run("/bin/cat", ["/proc/\(pid)/maps"]).stdout) ?? ""
        return Set(maps.split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first else { return nil }
            return path.contains("/libssh2.so") ? String(path) : nil
        })
    }

    @Test func theUnchangedPinnedLibSSH2LoadsAndIsTheFileMapped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let staged = try Self.stage(dir)
        let h = staged.harness
        defer { h.server.stop() }
        let doctor = try h.termhost(["doctor"])
        #expect(doctor.stdout.contains("✓  org.termhost.ssh \(staged.pluginVersion)"), "\(doctor.output)")
        #expect(try h.termhost(["--safe-mode", "exec", h.target, "true"]).status == 0)

        // Whatever the plugin's RUNPATH names, the process maps the checked copy, and only it.
        let exec = try Background(Paths.termhost, ["exec", h.target, "sleep 30"], environment: h.environment)
        defer {
            kill(exec.process.processIdentifier, SIGTERM)
            exec.process.waitUntilExit()
        }
        #expect(Wait.until { !Self.mappedLibSSH2(exec.process.processIdentifier).isEmpty }, "libssh2 never mapped")
        #expect(Self.mappedLibSSH2(exec.process.processIdentifier) == [staged.library])
    }

    @Test func aPinnedLibSSH2WithOneByteChangedRefusesThePluginNamingTheFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let staged = try Self.stage(dir)
        let h = staged.harness
        defer { h.server.stop() }
        let handle = try #require(FileHandle(forUpdatingAtPath: staged.library))
        let middle = try handle.seekToEnd() / 2
        try handle.seek(toOffset: middle)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: middle)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()

        let reason = "sha256 of \(staged.library) (a library it loads) is \(Self.sha256(staged.library)) but plugin set \(staged.set) expects \(staged.librarySHA256); the file was changed or replaced"
        let doctor = try h.termhost(["doctor"])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - org.termhost.ssh \(staged.pluginVersion): \(reason)"), "\(doctor.output)")
        let list = try h.termhost(["plugins", "list"])
        #expect(list.stdout.contains("org.termhost.ssh \(staged.pluginVersion): \(reason)"), "\(list.output)")
        let exec = try h.termhost(["exec", h.target, "true"])
        #expect(exec.status != 0, "\(exec.output)")
    }

    @Test func aMissingPinnedLibSSH2RefusesThePluginNamingTheFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let staged = try Self.stage(dir)
        let h = staged.harness
        defer { h.server.stop() }
        unlink(staged.library)
        let doctor = try h.termhost(["doctor"])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - org.termhost.ssh \(staged.pluginVersion): refused: \(staged.library), a library it loads that plugin set \(staged.set) pins, cannot be used: No such file or directory"),
                "\(doctor.output)")
    }
}
