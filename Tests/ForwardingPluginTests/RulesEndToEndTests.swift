import Foundation
import Testing
import TestSupport

/// `termhost forward add|edit|rm|list|show`: rules in the host store, error text word for word.
@Suite struct RulesEndToEndTests {
    /// A scratch environment with both plugins; no sshd needed to edit rules.
    func environment(_ dir: TemporaryDirectory) throws -> [String: String] {
        let plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: plugins)
        var env = Fixtures.environment(dir, pluginPath: plugins)
        env["HOME"] = dir.sub("home")
        return env
    }

    func termhost(_ env: [String: String], _ args: String...) throws -> Shell.Result {
        try Shell.run(Paths.termhost, ["forward"] + args, environment: env)
    }

    @Test func aBlankNameIsSavedAsHostPlusSSHArgumentAndHostChangesNeverRewriteIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let env = try environment(dir)
        let add = try termhost(env, "add", "prod", "-L", "8080:localhost:80")
        #expect(add.status == 0)
        #expect(add.stdout == "Saved forward 'prod (-L 8080)': prod -L 8080:localhost:80\n")
        #expect(try termhost(env, "add", "--name", "socks", "prod", "-D", "[::1]:1080").status == 0)
        #expect(try termhost(env, "add", "prod", "-R", "0.0.0.0:9000:127.0.0.1:22").status == 0)
        // The host changes (renamed in the vault): the saved name stays what it was.
        let edit = try termhost(env, "edit", "prod (-L 8080)", "--host", "production")
        #expect(edit.stdout == "Saved forward 'prod (-L 8080)': production -L 8080:localhost:80\n")
        let list = try termhost(env, "list")
        #expect(list.stdout == """
        NAME                    HOST        FORWARD                       STATE
        prod (-L 8080)          production  -L 8080:localhost:80          stopped
        prod (-R 0.0.0.0:9000)  prod        -R 0.0.0.0:9000:127.0.0.1:22  stopped
        socks                   prod        -D [::1]:1080                 stopped

        """)
        let show = try termhost(env, "show", "socks")
        #expect(show.stdout.contains("type:    dynamic (-D)\n"))
        #expect(show.stdout.contains("listen:  [::1]:1080\n"))
        let json = try termhost(env, "show", "prod (-L 8080)", "--json")
        #expect(json.stdout.contains("\"bindAddress\":\"127.0.0.1\""))
        #expect(json.stdout.contains("\"targetPort\":80"))
        // Clearing the name asks for a fresh default, from the host as it is now.
        let cleared = try termhost(env, "edit", "prod (-L 8080)", "--name", "")
        #expect(cleared.stdout == "Saved forward 'production (-L 8080)': production -L 8080:localhost:80\n")
        let rm = try termhost(env, "rm", "socks", "production (-L 8080)")
        #expect(rm.status == 0)
        #expect(try termhost(env, "list").stdout.contains("socks") == false)
    }

    @Test func badInputNamesWhatIsWrong() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let env = try environment(dir)
        let range = try termhost(env, "add", "prod", "-L", "99999:localhost:80")
        #expect(range.status == 2)
        #expect(range.stderr == "termhost forward add: -L '99999:localhost:80': port must be a whole number from 0 to 65535, not '99999'\n")
        // Past Int's range too: refused, never a trap.
        let huge = try termhost(env, "add", "prod", "-D", "99999999999999999999999")
        #expect(huge.stderr == "termhost forward add: -D '99999999999999999999999': port must be a whole number from 0 to 65535, not '99999999999999999999999'\n")
        let target = try termhost(env, "add", "prod", "-L", "80:localhost:-1")
        #expect(target.stderr == "termhost forward add: -L '80:localhost:-1': target port must be a whole number from 0 to 65535, not '-1'\n")
        let shape = try termhost(env, "add", "prod", "-L", "8080:localhost")
        #expect(shape.stderr == "termhost forward add: -L '8080:localhost': expected [bind_address:]port:host:hostport\n")
        let word = try termhost(env, "add", "prod", "-D", "socks")
        #expect(word.stderr == "termhost forward add: -D 'socks': port 'socks' is not a number (expected [bind_address:]port)\n")
        let bracket = try termhost(env, "add", "prod", "-L", "[::1:80:x:1")
        #expect(bracket.stderr == "termhost forward add: -L '[::1:80:x:1': unbalanced '['\n")
        let missing = try termhost(env, "rm", "nope")
        #expect(missing.status == 1)
        #expect(missing.stderr == "termhost forward: no rule named 'nope' (see 'termhost forward list')\n")
        #expect(try termhost(env, "add", "--name", "web", "prod", "-L", "8080:localhost:80").status == 0)
        let clash = try termhost(env, "add", "--name", "web", "prod", "-D", "1080")
        #expect(clash.stderr == "termhost forward: a rule named 'web' already exists (prod -L 8080:localhost:80)\n")
        let option = try termhost(env, "list", "--bogus")
        #expect(option.stderr == "termhost forward list: unknown option '--bogus'\nusage: termhost forward list [--json]\n")
        #expect(option.status == 2)
    }
}
