/// Which plugins run commands in the daemon now: one exclusive command, or any number of
/// shared ones (features with concurrent_commands), per plugin.
struct PluginCommandSlots {
    private var exclusive: Set<String> = []
    private var shared: [String: Int] = [:]

    /// Takes a slot; false when the plugin's commands cannot run beside what runs now.
    mutating func take(_ plugin: String, shared isShared: Bool) -> Bool {
        guard !exclusive.contains(plugin) else { return false }
        if isShared {
            shared[plugin, default: 0] += 1
            return true
        }
        guard shared[plugin, default: 0] == 0 else { return false }
        exclusive.insert(plugin)
        return true
    }

    mutating func give(_ plugin: String, shared isShared: Bool) {
        if isShared {
            shared[plugin, default: 1] -= 1
            if shared[plugin] == 0 { shared[plugin] = nil }
        } else {
            exclusive.remove(plugin)
        }
    }
}
