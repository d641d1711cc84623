import Foundation
import Testing
import TestSupport

/// Provider context (SDK/include/termhost/host.h, ABI 1.2): a service provided by two feature
/// instances of the same code, each call seeing its own instance's context; and the consumer,
/// although its order key is the lowest, activated after both providers.
@Suite struct ProviderContextEndToEndTests {
    /// Builds Tests/Fixtures/provider-context-plugin.c with its manifest into `plugins`.
    static func build(in plugins: String) throws {
        let dir = plugins + "/ctx"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", dir + "/libctx.so",
                                               Paths.root + "/Tests/Fixtures/provider-context-plugin.c"])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let manifest = """
        { "id": "org.test.ctx", "version": "1.0.0", "abi": "1.1", "library": "libctx.so",
          "features": [
            { "id": "org.test.ctx.user", "version": "1.0.0", "order": 1,
              "requiresServices": ["org.test.ctx.one/1", "org.test.ctx.two/1"],
              "commands": [ { "name": "ctx", "summary": "provider context probe" } ] },
            { "id": "org.test.ctx.one", "version": "1.0.0", "order": 500, "providesServices": ["org.test.ctx.one/1"] },
            { "id": "org.test.ctx.two", "version": "1.0.0", "order": 600, "providesServices": ["org.test.ctx.two/1"] } ] }
        """
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data(manifest.utf8))
    }

    @Test func twoInstancesOfOneProviderEachServeTheirOwnContext() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try ProviderContextEndToEndTests.build(in: plugins)
        let r = try Shell.run(Paths.termhost, ["ctx"], environment: Fixtures.environment(dir, pluginPath: plugins), timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == """
        one: org.test.ctx.one (call 1)
        two: org.test.ctx.two (call 1)
        one again: org.test.ctx.one (call 2)
        contexts differ: 1

        """, "\(r.stderr)")
        let features = try Shell.run(Paths.termhost, ["features"], environment: Fixtures.environment(dir, pluginPath: plugins), timeout: 60)
        let order = features.stdout.split(separator: "\n").compactMap { line in
            ["org.test.ctx.one", "org.test.ctx.two", "org.test.ctx.user"].first { line.contains($0) }
        }
        #expect(order == ["org.test.ctx.one", "org.test.ctx.two", "org.test.ctx.user"], "\(features.stdout)")
    }
}
