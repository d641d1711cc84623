import Foundation

/// Where plugins are looked for, in order (the first directory holding a plugin ID wins):
///  1. each directory of `$TERMHOST_PLUGIN_PATH` (colon-separated)          origin: environment
///  2. `$XDG_DATA_HOME/termhost/plugins` (default ~/.local/share/...)       origin: user
///  3. `<executable>/../lib/termhost/plugins`: the distribution's bundle     origin: distribution
///  4. each `$XDG_DATA_DIRS` entry + `/termhost/plugins` (default /usr/local/share:/usr/share)
///                                                                           origin: system
/// Plugin sets (`plugin-set.json`) are read only from distribution and system directories:
/// a user cannot pin or bless a plugin for safe mode.
public struct PluginSearchPath: Sendable, Equatable {
    public enum Origin: String, Sendable, Codable { case environment, user, distribution, system }

    public struct Entry: Sendable, Equatable {
        public let directory: String
        public let origin: Origin
        public init(directory: String, origin: Origin) {
            self.directory = directory
            self.origin = origin
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public static func standard(environment env: [String: String] = ProcessInfo.processInfo.environment,
                                executable: String = ExecutablePath.current) -> PluginSearchPath {
        var entries: [Entry] = []
        for dir in (env["TERMHOST_PLUGIN_PATH"] ?? "").split(separator: ":") where !dir.isEmpty {
            entries.append(Entry(directory: String(dir), origin: .environment))
        }
        entries.append(Entry(directory: XDG.dataHome(env) + "/termhost/plugins", origin: .user))
        let bundled = URL(fileURLWithPath: executable).deletingLastPathComponent()
            .appendingPathComponent("../lib/termhost/plugins").standardizedFileURL.path
        entries.append(Entry(directory: bundled, origin: .distribution))
        let dataDirs = (env["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
        for dir in dataDirs.split(separator: ":") where !dir.isEmpty {
            entries.append(Entry(directory: String(dir) + "/termhost/plugins", origin: .system))
        }
        var seen = Set<String>()
        return PluginSearchPath(entries: entries.filter { seen.insert($0.directory).inserted })
    }
}

/// XDG base directories, with the spec's defaults.
public enum XDG {
    static func home(_ env: [String: String]) -> String { env["HOME"] ?? NSHomeDirectory() }
    static func pick(_ env: [String: String], _ name: String, _ fallback: String) -> String {
        if let v = env[name], v.hasPrefix("/") { return v }
        return home(env) + fallback
    }
    public static func dataHome(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        pick(env, "XDG_DATA_HOME", "/.local/share")
    }
    public static func configHome(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        pick(env, "XDG_CONFIG_HOME", "/.config")
    }
    public static func cacheHome(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        pick(env, "XDG_CACHE_HOME", "/.cache")
    }
    public static func stateHome(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        pick(env, "XDG_STATE_HOME", "/.local/state")
    }
}

/// The running executable's path, from /proc/self/exe.
public enum ExecutablePath {
    public static var current: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
