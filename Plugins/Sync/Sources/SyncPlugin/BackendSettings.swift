import Foundation
import SyncCore
import SyncPostgres
import TermhostSDK

/// Which vault this device syncs with: the Sync plugin's store, collection "config", key
/// "backend", JSON {"kind":"folder","path":...} or {"kind":"postgres","postgres":{key: value},
/// "passwordSecret":ID}. Default: a folder under the data directory,
/// `$XDG_DATA_HOME/termhost/vault` (useful once something replicates it, or for one machine's
/// several stores); `termhost sync backend set folder PATH` points it at a shared one,
/// `termhost sync backend set postgres KEY=VALUE...` at a team's PostgreSQL. The PostgreSQL
/// password lives in the Sync plugin's own secrets; only its ID is saved here.
struct BackendSettings: Codable, Equatable {
    var kind: String
    var path: String?
    /// `PostgresSettings.options`, defaults filled in; never a password.
    var postgres: [String: String]?
    /// The ID of the PostgreSQL password in the secrets service; nil: no password (peer or
    /// trust authentication, as over a Unix socket).
    var passwordSecret: String?

    static func defaultFolder(_ env: [String: String]) -> String { dataDirectory(env) + "/vault" }

    /// Termhost's data directory, where the host keeps its store: `$XDG_DATA_HOME/termhost`.
    static func dataDirectory(_ env: [String: String]) -> String {
        let data = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((env["HOME"] ?? "/") + "/.local/share")
        return data + "/termhost"
    }

    static func load(_ store: Store, _ env: [String: String]) throws -> BackendSettings {
        guard let bytes = try store.get("config", "backend") else { return BackendSettings(kind: "folder", path: defaultFolder(env)) }
        guard let s = try? JSONDecoder().decode(BackendSettings.self, from: Data(bytes)) else {
            throw PluginError("the saved backend setting is unreadable; set it again with 'termhost sync backend set'")
        }
        return s
    }

    func save(_ store: Store) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try store.put("config", "backend", Array(try encoder.encode(self)))
    }

    /// `environment` tells the default folder, the one vault a sync may make itself: it is in
    /// Termhost's own data directory, never a share that could be missing.
    func open(secrets: Secrets, environment: [String: String]) throws -> SyncBackend {
        switch kind {
        case "folder":
            guard let path, path.hasPrefix("/") else { throw PluginError("the vault folder must be an absolute path") }
            return FolderBackend(root: path, create: path == BackendSettings.defaultFolder(environment))
        case "postgres":
            return PostgresBackend(settings: try postgresSettings(), password: try password(secrets))
        default:
            throw PluginError("backend kind '\(VisibleText.of(kind))' is not known to this Termhost; choose one with 'termhost sync backend set'")
        }
    }

    func postgresSettings() throws -> PostgresSettings {
        do { return try PostgresSettings(options: postgres ?? [:]) } catch {
            throw PluginError("the saved PostgreSQL backend is refused: \(error.message); set it again with 'termhost sync backend set postgres KEY=VALUE...'")
        }
    }

    private func password(_ secrets: Secrets) throws -> String? {
        guard let passwordSecret else { return nil }
        guard let bytes = try secrets.get(passwordSecret) else {
            throw PluginError("the PostgreSQL password is missing from the secrets store; save it again with 'termhost sync backend set postgres KEY=VALUE... --password-stdin'")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The clock the engine reads for "last success" (display only; order never depends on it).
/// TERMHOST_SYNC_CLOCK_OFFSET (whole seconds, at most ten years either way) shifts it, so tests
/// can give two devices clocks days apart.
enum DisplayClock {
    static func make(_ env: [String: String]) throws -> () -> Double {
        guard let text = env["TERMHOST_SYNC_CLOCK_OFFSET"] else { return { Date().timeIntervalSince1970 } }
        guard let n = Int(text) else { throw PluginError("TERMHOST_SYNC_CLOCK_OFFSET must be a whole number of seconds, not '\(VisibleText.of(text))'") }
        let offset: Int
        do { offset = try BoundedNumber.check(n, name: "TERMHOST_SYNC_CLOCK_OFFSET", in: -315_360_000...315_360_000, unit: "seconds") } catch {
            throw PluginError(error.description)
        }
        return { Date().timeIntervalSince1970 + Double(offset) }
    }
}
