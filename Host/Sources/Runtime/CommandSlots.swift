import Foundation
import Synchronization

/// Which plugins run commands in the daemon now, so that the ABI's promise holds there: a
/// plugin's commands never overlap (`[main]`) unless its feature sets concurrent_commands, and
/// then they overlap only each other. Per plugin, one exclusive command or any number of
/// shared ones. The daemon takes a slot for each client's command (DaemonCommand) and for each
/// command one of them runs through termhost.commands/1 (HostRuntime.runCommand), except when
/// the calling thread holds that plugin already (an outer command of it): that is nesting on
/// one thread, which [main] allows.
public final class CommandSlots: Sendable {
    private struct Slots {
        var exclusive: Set<String> = []
        var shared: [String: Int] = [:]
    }
    private let slots = Mutex(Slots())
    private static let heldKey = "org.termhost.heldPlugins"

    public init() {}

    /// Takes a slot; false when the plugin's commands cannot run beside what runs now.
    public func take(_ plugin: String, shared: Bool) -> Bool {
        slots.withLock { s in
            guard !s.exclusive.contains(plugin) else { return false }
            if shared {
                s.shared[plugin, default: 0] += 1
                return true
            }
            guard s.shared[plugin, default: 0] == 0 else { return false }
            s.exclusive.insert(plugin)
            return true
        }
    }

    public func give(_ plugin: String, shared: Bool) {
        slots.withLock { s in
            if shared {
                s.shared[plugin, default: 1] -= 1
                if s.shared[plugin] == 0 { s.shared[plugin] = nil }
            } else {
                s.exclusive.remove(plugin)
            }
        }
    }

    /// Runs body with `plugin` held by this thread (its slot taken for it).
    public static func holding<T>(_ plugin: String, _ body: () -> T) -> T {
        let before = held
        Thread.current.threadDictionary[heldKey] = before.union([plugin])
        defer { Thread.current.threadDictionary[heldKey] = before }
        return body()
    }

    /// The plugins this thread holds a slot for.
    public static var held: Set<String> { Thread.current.threadDictionary[heldKey] as? Set<String> ?? [] }
}
