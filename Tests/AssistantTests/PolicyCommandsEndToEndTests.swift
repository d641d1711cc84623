import Foundation
import Testing
import TestSupport

/// `termhost assistant approvals` and `audit` through the real binary, the dlopen'd Assistant
/// plugin and its namespace of the SQLite store.
@Suite struct PolicyCommandsEndToEndTests {
    @Test func approvalsAndAuditAnswerFromTheStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        _ = try Fixtures.bundle("libAssistantPlugin.so", as: "org.termhost.assistant", in: plugins)
        let env = Fixtures.environment(dir, pluginPath: plugins)
        func termhost(_ args: [String]) throws -> Shell.Result { try Shell.run(Paths.termhost, args, environment: env) }

        let list = try termhost(["assistant", "approvals"])
        #expect(list.status == 0 && list.stdout == "no remembered approvals\n", "\(list.output)")
        #expect(try termhost(["assistant", "approvals", "--json"]).stdout == "[]\n")
        let rm = try termhost(["assistant", "approvals", "rm", "0123456789ab"])
        #expect(rm.status == 1 && rm.stderr == "termhost assistant approvals: no approval with ID '0123456789ab'\n", "\(rm.output)")
        let audit = try termhost(["assistant", "audit"])
        #expect(audit.status == 0 && audit.stdout == "no decisions recorded\n", "\(audit.output)")
        let usage = try termhost(["assistant", "audit", "--since", "1h"])
        #expect(usage.status == 2 && usage.stderr.hasPrefix("usage: termhost assistant audit"), "\(usage.output)")
    }
}
