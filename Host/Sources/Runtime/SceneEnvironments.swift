import Glibc
import Synchronization

/// The environment of the user behind each scene, for termhost.environment/1 (services/
/// environment.h). A daemon client's scene has the environment the client sent with its
/// command; every other scene (the CLI's own, scene 0, one that ended) reads the process's,
/// which is the user's wherever the process is the CLI.
///
/// Threading: [any-thread]; the map is held in a Mutex.
public final class SceneEnvironments: Sendable {
    private let scenes = Mutex<[UInt64: [String: String]]>([:])

    /// Gives scene an environment of its own (nil: the process's again).
    func set(_ environment: [String: String]?, scene: UInt64) {
        scenes.withLock { $0[scene] = environment }
    }

    /// The names set for scene (its own environment's, else the process's).
    public func names(scene: UInt64) -> [String] {
        if let own = scenes.withLock({ $0[scene] }) { return Array(own.keys) }
        var names: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") { names.append(String(text[..<equals])) }
            entry += 1
        }
        return names
    }

    /// The value of name for scene; nil when it is not set there.
    public func value(_ name: String, scene: UInt64) -> String? {
        if let own = scenes.withLock({ $0[scene] }) { return own[name] }
        return getenv(name).map { String(cString: $0) }
    }
}
