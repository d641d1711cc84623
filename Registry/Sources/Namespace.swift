/// Who owns an ID: a plugin's features and services live in its own reverse-DNS namespace.
///
/// Why: feature IDs are global. Without an owner, a plugin `com.evil.plugin` could declare
/// `org.termhost.ssh`, be registered first, and take over `exec` while the real SSH plugin's
/// feature was dropped as a duplicate (and SFTP, forwarding and metrics, which need it, went
/// with it). So an ID belongs to the plugin whose ID it is, or whose ID it starts with followed
/// by a dot; when plugin IDs nest (`org.a` and `org.a.b`) the longest one owns it.
public enum Namespace {
    /// True when `id` is `plugin` or starts with `plugin` + ".".
    public static func contains(_ plugin: String, _ id: String) -> Bool {
        id == plugin || (id.utf8.count > plugin.utf8.count + 1 && id.hasPrefix(plugin + "."))
    }

    /// The plugin (of `plugins`) that owns `id`: the longest plugin ID whose namespace holds it.
    public static func owner(of id: String, among plugins: some Sequence<String>) -> String? {
        plugins.filter { contains($0, id) }.max { $0.utf8.count < $1.utf8.count }
    }

    /// The name part of a service ID ("org.termhost.ssh.transport" of "org.termhost.ssh.transport/1").
    public static func serviceName(_ service: String) -> String {
        String(service.prefix { $0 != "/" })
    }

    /// The host's own services (termhost.log/1, ...): no plugin may provide one.
    public static func isHostService(_ service: String) -> Bool {
        serviceName(service) == "termhost" || serviceName(service).hasPrefix("termhost.")
    }
}
