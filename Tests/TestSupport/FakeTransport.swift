import Foundation

extension Fixtures {
    /// Tests/Fixtures/FakeTransport/fake-transport.c: plugin and feature org.termhost.ssh,
    /// providing org.termhost.ssh.transport/1 with no SSH at all (commands run here, TCP
    /// connects from here), compiled into `parent/org.termhost.ssh` INSTEAD of the real SSH
    /// plugin, so consumers find it where they find the real one.
    @discardableResult
    public static func fakeTransport(in parent: String) throws -> Plugin {
        let dir = parent + "/org.termhost.ssh"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/libfake-transport.so"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", lib,
                                               Paths.root + "/Tests/Fixtures/FakeTransport/fake-transport.c"])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        // Derived from the library, as for every plugin: its code declares the feature once.
        let manifest = dir + "/manifest.json"
        _ = FileManager.default.createFile(atPath: manifest, contents: try derivedManifest(of: lib))
        return Plugin(directory: dir, library: lib, manifest: manifest)
    }
}

/// A scratch home and plugin path with the fake transport where the SSH plugin would be: for
/// tests of plugins that use the transport service but are not about SSH. Every destination
/// is this machine; "lost@..." is a connection lost 100 ms after it is watched.
public struct FakeTransportHarness {
    public let dir: TemporaryDirectory
    public let home: String
    public let plugins: String
    public var extraEnvironment: [String: String] = [:]

    public init(dir: TemporaryDirectory) throws {
        self.dir = dir
        home = dir.sub("home")
        plugins = dir.sub("plugins")
        try Fixtures.fakeTransport(in: plugins)
    }

    public var environment: [String: String] {
        var env = Fixtures.environment(dir, pluginPath: plugins, extra: extraEnvironment)
        env["HOME"] = home
        return env
    }

    /// A destination the fake accepts (it never connects anywhere).
    public var target: String { "\(NSUserName())@fake-host" }

    @discardableResult
    public func termhost(_ args: [String], stdin: String? = nil, timeout: Double = 60) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: environment, stdin: stdin, timeout: timeout)
    }
}
