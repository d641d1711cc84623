import Foundation
import SyncCore
import SyncPostgres
import TermhostSDK

/// `termhost sync backend show|set`. A PostgreSQL password never comes on the command line or
/// from the environment (both are visible in the process list): it is one line on stdin with
/// `--password-stdin` (as `docker login` takes it), else asked with echo off on a terminal, and
/// kept in the Sync plugin's secrets; the saved setting holds only its ID.
extension SyncCommand {
    static let maxPasswordBytes = 1024

    func backend(_ words: [String], json: Bool, passwordFromStdin: Bool, create: Bool) throws -> Int32 {
        if passwordFromStdin && !(words.count >= 2 && words[0] == "set" && words[1] == "postgres") {
            c.printError("termhost sync backend: --password-stdin goes with 'set postgres' only")
            return 2
        }
        if create && !(words.count >= 2 && words[0] == "set" && words[1] == "folder") {
            c.printError("termhost sync backend: --create goes with 'set folder' only")
            return 2
        }
        switch (words.first, words.count) {
        case ("show"?, 1), (nil, 0):
            show(try BackendSettings.load(store, environment), json: json)
            return 0
        case ("set"?, 3) where words[1] == "folder":
            guard FolderVaultLocation.isAbsolute(words[2]) else { c.printError("termhost sync backend set: the folder must be an absolute path"); return 2 }
            let path = FolderVaultLocation.normalized(words[2])
            if let why = FolderVaultLocation.refusal(path) { c.printError("termhost sync backend set: \(VisibleText.of(why))"); return 2 }
            // The vault is made here, on purpose, or not at all: a sync never makes one, so an
            // unmounted share is refused instead of becoming a new, empty vault.
            let made: Bool
            do throws(SyncBackendError) {
                made = try FolderBackend.makeVault(at: path, allowed: create)
            } catch {
                c.printError("termhost sync backend set: \(VisibleText.of(error.message))")
                return 1
            }
            try replace(with: BackendSettings(kind: "folder", path: path))
            c.print("vault: folder \(VisibleText.of(path))\(made ? " (a new vault)" : ""); the next sync reconciles this device's records with it")
            return 0
        case ("set"?, _) where words.count >= 2 && words[1] == "postgres":
            return try setPostgres(Array(words.dropFirst(2)), passwordFromStdin: passwordFromStdin)
        default:
            c.printError("termhost sync backend: use 'show', 'set folder PATH' or 'set postgres KEY=VALUE...'\n\(SyncCommand.usage)")
            return 2
        }
    }

    private func show(_ s: BackendSettings, json: Bool) {
        guard s.kind == "postgres" else {
            c.print(json ? "{\"kind\":\(JSONText.quoted(s.kind)),\"path\":\(s.path.map(JSONText.quoted) ?? "null")}" : "\(s.kind) \(VisibleText.of(s.path ?? ""))")
            return
        }
        let options = (s.postgres ?? [:]).sorted { $0.key < $1.key }
        let password = s.passwordSecret == nil ? "none" : "stored"
        if json {
            let fields = options.map { "\(JSONText.quoted($0.key)):\(JSONText.quoted($0.value))" }.joined(separator: ",")
            c.print("{\"kind\":\"postgres\",\"settings\":{\(fields)},\"password\":\"\(password)\"}")
        } else {
            c.print("postgres " + options.map { VisibleText.of("\($0.key)=\($0.value)") }.joined(separator: " "))
            c.print("password: \(password)")
        }
    }

    private func setPostgres(_ words: [String], passwordFromStdin: Bool) throws -> Int32 {
        let command = "termhost sync backend set postgres"
        var options: [String: String] = [:]
        for word in words {
            guard let eq = word.firstIndex(of: "="), eq != word.startIndex else {
                c.printError("\(command): '\(VisibleText.of(word))' is not KEY=VALUE (settings: connect_timeout, dbname, host, port, sslmode, sslrootcert, user, vault)")
                return 2
            }
            let key = String(word[..<eq])
            if key == "password" {
                c.printError("\(command): the password is not a setting (the process list would show it); give it on stdin with --password-stdin, or run this on a terminal to be asked")
                return 2
            }
            guard options[key] == nil else { c.printError("\(command): \(VisibleText.of(key)) is given twice"); return 2 }
            options[key] = String(word[word.index(after: eq)...])
        }
        let settings: PostgresSettings
        do { settings = try PostgresSettings(options: options) } catch {
            c.printError("\(command): \(VisibleText.of(error.message))")
            return 2
        }
        var password: [UInt8]? = try passwordFromStdin ? readPasswordLine() : askPassword(user: settings.user)
        defer { if let count = password?.count { password = [UInt8](repeating: 0, count: count) } }
        var chosen = BackendSettings(kind: "postgres", postgres: Dictionary(uniqueKeysWithValues: settings.options.map { ($0.key, $0.value) }))
        if let password {
            chosen.passwordSecret = try secrets.put(password)
        }
        try replace(with: chosen)
        c.print("vault: \(VisibleText.of(settings.summary)), password: \(password == nil ? "none" : "stored"); the next sync reconciles this device's records with it")
        return 0
    }

    /// Saves the new backend, then forgets the password of the one it replaces. Only a failed
    /// save takes the new password back: once saved, the settings point to it.
    private func replace(with chosen: BackendSettings) throws {
        let previous = try? BackendSettings.load(store, environment)
        do { try chosen.save(store) } catch {
            if let id = chosen.passwordSecret { try? secrets.remove(id) }
            throw error
        }
        if let old = previous?.passwordSecret, old != chosen.passwordSecret {
            do { try secrets.remove(old) } catch {
                c.printError("warning: the previous PostgreSQL password could not be removed from the secrets store: \(error)")
            }
        }
        try engine().reset()
    }

    /// One line of stdin, without its line end; the password may not be empty there.
    private func readPasswordLine() throws -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(c.stdinFD, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == UInt8(ascii: "\n") { break }
            line.append(byte)
            guard line.count <= SyncCommand.maxPasswordBytes else {
                throw PluginError("--password-stdin: the line is longer than \(SyncCommand.maxPasswordBytes) bytes")
            }
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard !line.isEmpty else {
            throw PluginError("--password-stdin read no password (an empty line or no input); leave --password-stdin out for a role without one")
        }
        guard !line.contains(0) else { throw PluginError("--password-stdin: the password must not contain a NUL byte") }
        return line
    }

    /// Asked with echo off on a terminal; without one, or with an empty answer, no password.
    private func askPassword(user: String) throws -> [UInt8]? {
        guard let interact, interact.canPrompt(scene: c.scene) else { return nil }
        let typed = try interact.prompt("Password for PostgreSQL role '\(VisibleText.of(user))' (empty for none): ", scene: c.scene, echo: false)
        return typed.isEmpty ? nil : Array(typed.utf8)
    }
}
