import Foundation
import Testing
import TestSupport

@Suite struct SandboxEndToEndTests {
    @Test func sandboxStartsAnSSHDTheNewcomerCanUseAndStopsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        var env = Fixtures.environment(dir, pluginPath: plugins)
        env["HOME"] = dir.sub("home")
        func termhost(_ args: String...) throws -> Shell.Result { try Shell.run(Paths.termhost, args, environment: env) }
        defer { _ = try? termhost("sandbox", "stop") }
        // The sandbox's sshd runs the user's shell: started with a private home, so its sessions
        // do not run this machine's ~/.bashrc (PrivateHome).
        let started = try PrivateHome.wrap([Paths.termhost, "sandbox", "start"], home: dir.sub("remote-home"))
        let start = try Shell.run(started[0], Array(started.dropFirst()), environment: env)
        #expect(start.status == 0, "\(start.output)")
        #expect(start.stdout.hasSuffix("saved host 'sandbox'. Try: termhost ssh sandbox\n"))
        #expect(try termhost("sandbox", "status").status == 0)
        let hello = try termhost("exec", "sandbox", "--", "echo", "hello", "sandbox")
        #expect(hello.stdout == "hello sandbox\n", "\(hello.stderr)")
        #expect(hello.stderr.isEmpty, "the sandbox's host key is trusted without a prompt")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/home/.ssh/known_hosts"), "~/.ssh is left alone")
        #expect(try termhost("sandbox", "stop").stdout == "sandbox: stopped\n")
        let status = try termhost("sandbox", "status")
        #expect(status.status == 3 && status.stdout == "sandbox: not running; start it with 'termhost sandbox start'\n")
    }
}
