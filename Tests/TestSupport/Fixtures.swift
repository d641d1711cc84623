import Foundation

/// Builds real plugin bundles (manifest.json + .so) during the test run: C fixtures compiled
/// with cc from Tests/Fixtures/fixture-plugin.c, and the example plugins.
public enum Fixtures {
    public static var fixtureSource: String { Paths.root + "/Tests/Fixtures/fixture-plugin.c" }

    public struct Plugin: Sendable {
        public let directory: String
        public let library: String
        public let manifest: String
    }

    /// Compiles the fixture with `defines` into `<parent>/<dirName>/lib<dirName>.so` and writes a
    /// manifest. `manifest` overrides fields of the generated manifest (JSON text per key).
    @discardableResult
    public static func cPlugin(in parent: String, dirName: String, id: String = "org.test.fixture",
                               version: String = "1.0.0", defines: [String] = [], manifestID: String? = nil,
                               manifestVersion: String? = nil, abi: String = "1.2", extraFeatureJSON: String = "",
                               manifestOverride: String? = nil, linkFlags: [String] = []) throws -> Plugin {
        let dir = parent + "/" + dirName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/lib\(dirName).so"
        var args = ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared",
                    "-I", Paths.sdkInclude, "-o", lib, fixtureSource,
                    "-DPLUGIN_ID=\"\(id)\"", "-DPLUGIN_VERSION=\"\(version)\""]
        args += defines.map { "-D" + $0 }
        args += linkFlags
        let cc = try Shell.run("/usr/bin/cc", args)
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let featureID = defines.first { $0.hasPrefix("FEATURE_ID=") }.map { String($0.dropFirst(11)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? id
        let command = defines.first { $0.hasPrefix("COMMAND_NAME=") }.map { String($0.dropFirst(13)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "fixture"
        let order = defines.first { $0.hasPrefix("FEATURE_ORDER=") }.map { String($0.dropFirst(14)) } ?? "100"
        let manifest = manifestOverride ?? """
        {
          "id": "\(manifestID ?? id)", "version": "\(manifestVersion ?? version)", "abi": "\(abi)",
          "library": "lib\(dirName).so",
          "features": [ { "id": "\(featureID)", "version": "\(manifestVersion ?? version)", "order": \(order)\(extraFeatureJSON),
                          "commands": [ { "name": "\(command)", "summary": "fixture command" } ] } ]
        }
        """
        let manifestPath = dir + "/manifest.json"
        _ = FileManager.default.createFile(atPath: manifestPath, contents: Data(manifest.utf8))
        return Plugin(directory: dir, library: lib, manifest: manifestPath)
    }

    /// The hello-c example built with its own Makefile into `parent`.
    @discardableResult
    public static func helloC(in parent: String) throws -> Plugin {
        let r = try Shell.run("/usr/bin/make", ["-s", "-C", Paths.root + "/SDK/Examples/hello-c", "OUT=\(parent)"])
        guard r.status == 0 else { throw Shell.Failure(description: "make failed: \(r.output)") }
        let dir = parent + "/org.termhost.examples.hello-c"
        return Plugin(directory: dir, library: dir + "/libhello-c.so", manifest: dir + "/manifest.json")
    }

    /// A plugin library SwiftPM built, bundled with its manifest (a path in the repository)
    /// into `parent/dirName`, as Scripts/stage.sh does.
    public static func bundle(_ library: String, manifest: String, as dirName: String, in parent: String) throws -> Plugin {
        let dir = parent + "/" + dirName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/" + library
        for file in [lib, dir + "/manifest.json"] { try? FileManager.default.removeItem(atPath: file) }
        try FileManager.default.copyItem(atPath: Paths.products + "/" + library, toPath: lib)
        try FileManager.default.copyItem(atPath: Paths.root + "/" + manifest, toPath: dir + "/manifest.json")
        return Plugin(directory: dir, library: lib, manifest: dir + "/manifest.json")
    }

    /// The hello-swift example as SwiftPM built it.
    @discardableResult
    public static func helloSwift(in parent: String) throws -> Plugin {
        try bundle("libHelloSwiftPlugin.so", manifest: "SDK/Examples/hello-swift/manifest.json", as: "org.termhost.examples.hello-swift", in: parent)
    }

    /// The Swift services fixture (Tests/Fixtures/SwiftServicesPlugin) as SwiftPM built it.
    @discardableResult
    public static func swiftServices(in parent: String) throws -> Plugin {
        try bundle("libSwiftServicesFixture.so", manifest: "Tests/Fixtures/SwiftServicesPlugin/manifest.json", as: "swift-services", in: parent)
    }

    /// The directory holding the loaded libswiftCore.so, for fixtures that pretend to be Swift.
    public static var swiftRuntimeDirectory: String? {
        // /proc files report size 0, so read to the end rather than by size.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        for line in maps.split(separator: "\n") where line.hasSuffix("/libswiftCore.so") {
            if let path = line.split(separator: " ").last { return (String(path) as NSString).deletingLastPathComponent }
        }
        return nil
    }

    /// A scratch environment: XDG dirs inside `dir`, the plugin path, no operator policy.
    public static func environment(_ dir: TemporaryDirectory, pluginPath: String, extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = dir.sub("data")
        env["XDG_CONFIG_HOME"] = dir.sub("config")
        env["XDG_CACHE_HOME"] = dir.sub("cache")
        env["XDG_STATE_HOME"] = dir.sub("state")
        env["XDG_DATA_DIRS"] = dir.sub("system")
        env["TERMHOST_PLUGIN_PATH"] = pluginPath
        env["TERMHOST_POLICY"] = dir.path + "/policy.json"
        env["TERMHOST_PROBE"] = Paths.probe
        for (k, v) in extra { env[k] = v }
        return env
    }
}

extension Fixtures {
    /// Tests/Fixtures/services-plugin.c: `termhost svc <action>` exercises each host service.
    @discardableResult
    public static func servicesPlugin(in parent: String) throws -> Plugin {
        let dir = parent + "/services"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/libservices.so"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", lib,
                                               Paths.root + "/Tests/Fixtures/services-plugin.c"])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let manifest = dir + "/manifest.json"
        _ = FileManager.default.createFile(atPath: manifest, contents: Data("""
        { "id": "org.test.services", "version": "1.0.0", "abi": "1.2", "library": "libservices.so",
          "features": [ { "id": "org.test.services", "version": "1.0.0", "order": 10,
                          "commands": [ { "name": "svc", "summary": "exercise host services" } ] } ] }
        """.utf8))
        return Plugin(directory: dir, library: lib, manifest: manifest)
    }
}
