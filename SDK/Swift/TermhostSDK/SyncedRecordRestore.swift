import CTermhost

/// `termhost <command> restore NAME [--version N] [--json]` for a plugin's synced collection:
/// brings a version of one of its records back from the vault (`termhost hosts restore web`).
///
/// The versions live in the sync provider, not in the plugin, so this runs the provider's
/// `termhost sync restore NAMESPACE/COLLECTION/NAME` through the commands service; the
/// restored version meets the plugin's own sync check (Store.declareSyncCheck) like any
/// version from another device. NAME is the record's key, or the `name` field of a record
/// keyed otherwise (a forwarding rule keyed by its ID). [main], like every command.
public enum SyncedRecordRestore {
    public static func run(_ c: CommandInvocation, _ arguments: [String], commands: Commands?,
                           namespace: String, collection: String, command: String) -> Int32 {
        let spec = CommandArguments(command, usage: "usage: \(command) NAME [--version N] [--json]\n"
                                        + "  brings back the version N of NAME the vault holds ('termhost sync history \(collection)/NAME' lists them);\n"
                                        + "  without --version, the last version of a deleted NAME",
                                    options: [.value("--version"), .flag("--json")], maxArguments: 1)
        let parsed: ParsedArguments
        do { parsed = try c.parse(arguments, with: spec) } catch { return error.status }
        guard let name = parsed.arguments.first else { c.printError(spec.usage ?? command); return CommandUsageError.exitStatus }
        var argv = ["sync", "restore", "\(namespace)/\(collection)/\(name)"]
        if let version = parsed.value("--version") { argv += ["--version", version] }
        if parsed.has("--json") || c.jsonOutput { argv.append("--json") }
        guard let commands else {
            c.printError("\(command): this host has no commands service, which restoring through the sync feature needs")
            return 1
        }
        do {
            return try commands.run(argv, scene: c.scene)
        } catch where error.code == Int32(TERMHOST_ERR_NOT_FOUND) {
            c.printError("\(command): the vault's versions are kept by the Sync feature (org.termhost.sync), which is not enabled here; "
                         + "enable it in the config file to restore")
            return 1
        } catch {
            c.printError("\(command): \(error.message)")
            return 1
        }
    }
}
