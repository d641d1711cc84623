import Foundation
import Synchronization

/// Builds real plugin bundles (manifest.json + .so) during the test run: C fixtures compiled
/// with cc from Tests/Fixtures/fixture-plugin.c, and the example plugins.
public enum Fixtures {
    /// The ABI the SDK's headers declare (version.h), which test plugins built from them declare
    /// in their manifests: one place to change when the minor grows.
    public static let abi = "1.8"
    /// The minor of `abi`: a plugin declaring minor + 1 is one this host must refuse.
    public static let abiMinor = Int(abi.split(separator: ".")[1])!

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
                               manifestVersion: String? = nil, abi: String = Fixtures.abi, extraFeatureJSON: String = "",
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

    /// Tests/Fixtures/tools-plugin.c compiled with `defines` into `<parent>/tools/libtools.so`,
    /// with the manifest `termhost plugins manifest` derives from it (unless `deriveManifest` is
    /// false: the caller writes one); returns the bundle directory.
    @discardableResult
    public static func toolsPlugin(in parent: String, defines: [String] = [], deriveManifest: Bool = true) throws -> String {
        let dir = parent + "/tools"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/libtools.so"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", lib,
                                               Paths.root + "/Tests/Fixtures/tools-plugin.c"] + defines.map { "-D" + $0 })
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        guard deriveManifest else { return dir }
        let manifest = try Shell.run(Paths.termhost, ["plugins", "manifest", lib, "--output", dir + "/manifest.json"])
        guard manifest.status == 0 else { throw Shell.Failure(description: "plugins manifest failed: \(manifest.output)") }
        return dir
    }

    /// The hello-c example built with its own Makefile into `parent`.
    @discardableResult
    public static func helloC(in parent: String) throws -> Plugin {
        let dir = try makeExample("hello-c", in: parent)
        return Plugin(directory: dir, library: dir + "/libhello-c.so", manifest: dir + "/manifest.json")
    }

    /// Builds SDK/Examples/<name> with its Makefile into `parent` (the manifest derived by the
    /// built termhost), and returns the bundle directory.
    public static func makeExample(_ name: String, in parent: String) throws -> String {
        let r = try Shell.run("/usr/bin/make", ["-s", "-C", Paths.root + "/SDK/Examples/" + name, "OUT=\(parent)",
                                                "TERMHOST=\(Paths.termhost)"])
        guard r.status == 0 else { throw Shell.Failure(description: "make failed: \(r.output)") }
        return parent + "/org.termhost.examples." + name
    }

    /// A plugin library SwiftPM built, bundled into `parent/dirName` with the manifest its code
    /// declares, as Scripts/stage.sh does (`termhost plugins manifest`).
    public static func bundle(_ library: String, as dirName: String, in parent: String) throws -> Plugin {
        let dir = parent + "/" + dirName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/" + library
        for file in [lib, dir + "/manifest.json"] { try? FileManager.default.removeItem(atPath: file) }
        let built = Paths.products + "/" + library
        let manifest = try derivedManifest(of: built)
        try FileManager.default.copyItem(atPath: built, toPath: lib)
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: manifest)
        return Plugin(directory: dir, library: lib, manifest: dir + "/manifest.json")
    }

    /// `termhost plugins manifest <library>`, run once per test run and library: each run
    /// probes the library in a child, and dozens of tests bundle the same few plugins. Keyed by
    /// path and mtime, so a library rebuilt during the run gets a new manifest.
    public static func derivedManifest(of library: String) throws -> Data {
        let attributes = try FileManager.default.attributesOfItem(atPath: library)
        let key = library + "@" + String((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
        return try manifestCache.withLock { cache in
            if let cached = cache[key] { return cached }
            let r = try Shell.run(Paths.termhost, ["plugins", "manifest", library])
            guard r.status == 0 else { throw Shell.Failure(description: "termhost plugins manifest \(library) failed: \(r.output)") }
            cache[key] = Data(r.stdout.utf8)
            return cache[key]!
        }
    }

    private static let manifestCache = Mutex<[String: Data]>([:])

    /// The hello-swift example as SwiftPM built it.
    @discardableResult
    public static func helloSwift(in parent: String) throws -> Plugin {
        try bundle("libHelloSwiftPlugin.so", as: "org.termhost.examples.hello-swift", in: parent)
    }

    /// The Swift services fixture (Tests/Fixtures/SwiftServicesPlugin) as SwiftPM built it.
    @discardableResult
    public static func swiftServices(in parent: String) throws -> Plugin {
        try bundle("libSwiftServicesFixture.so", as: "swift-services", in: parent)
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
        // The daemon's socket directory: a test's own, never the machine user's daemon.
        env["XDG_RUNTIME_DIR"] = dir.path + "/run"
        env["TERMHOST_PLUGIN_PATH"] = pluginPath
        env["TERMHOST_POLICY"] = dir.path + "/policy.json"
        env["TERMHOST_PROBE"] = Paths.probe
        // A termhost that a test crashes on purpose (a plugin's SIGSEGV, in the CLI or the
        // daemon) ends with the signal and the host's own crash record; the Swift runtime's
        // backtracer would add seconds of work per crash, and under load one was seen still
        // running minutes after its process had gone, which test-scope rightly failed.
        env["SWIFT_BACKTRACE"] = "enable=no"
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
        { "id": "org.test.services", "version": "1.0.0", "abi": "\(Fixtures.abi)", "library": "libservices.so",
          "features": [ { "id": "org.test.services", "version": "1.0.0", "order": 10,
                          "commands": [ { "name": "svc", "summary": "exercise host services" } ] } ] }
        """.utf8))
        return Plugin(directory: dir, library: lib, manifest: manifest)
    }
}
