#if canImport(TermhostSDK)
import TermhostSDK   // the sync-record fuzz target compiles this file with the SDK files it uses
#endif

/// Where to connect: a saved vault host or an ad-hoc `user@host:port` (IPv6 as `[::1]:2222`).
struct Destination: Equatable, Codable {
    var name: String
    var address: String
    var port: Int
    var user: String?
    var identityFile: String?
    /// Jump hosts to go through, outermost first (ProxyJump), as names or user@host[:port].
    var jump: [String]? = nil
    /// ServerAliveInterval / ServerAliveCountMax; nil takes the feature's settings.
    var keepaliveInterval: Int? = nil
    var keepaliveCountMax: Int? = nil
    /// The secret ID of a saved password (from the host's identity); never the password.
    var passwordSecret: String? = nil
    /// The secret ID of a private key kept in the secrets service (from the host's identity).
    var keySecret: String? = nil
    /// ForwardAgent: the saved host's setting, or `-A`/`-a` for one connection; nil is off.
    var forwardAgent: Bool? = nil
    /// The saved host's SendEnv and SetEnv (HostRecord).
    var sendEnv: [String]? = nil
    var setEnv: [String]? = nil
    /// The saved host's certificate for its key (HostRecord.certificateFile).
    var certificateFile: String? = nil
    /// The saved host's key files after identityFile (HostRecord.moreIdentityFiles).
    var moreIdentityFiles: [String]? = nil
    /// ssh_config's HostKeyAlias: the name its host key is looked up and saved under.
    var hostKeyAlias: String? = nil

    /// The name and port for known_hosts (and the synced host keys): the alias as it is (as
    /// ssh uses it: no `[alias]:port`), else the address and port.
    var hostKeyName: String { hostKeyAlias ?? address }
    var hostKeyPort: Int { hostKeyAlias == nil ? port : 22 }
    /// The saved identity this destination uses, and what it stored on another device that
    /// this one lacks (its key, its password): named when authentication fails.
    var identityName: String? = nil
    var keyElsewhere: Bool? = nil
    var passwordElsewhere: Bool? = nil

    /// The line that says why a refusal may be this device's: the identity's stored key or
    /// password is on another device (stored secrets never sync), and how to store it here.
    var missingCredentialsHint: String? {
        guard let name = identityName, keyElsewhere == true || passwordElsewhere == true else { return nil }
        let missing = [keyElsewhere == true ? "key" : nil, passwordElsewhere == true ? "password" : nil].compactMap { $0 }
        let fix = keyElsewhere == true ? "--store-key FILE" : "--password"
        return "Identity '\(VisibleText.of(name))' has a stored \(missing.joined(separator: " and ")) on another device but not on this one "
            + "(stored keys and passwords never sync): termhost identities edit \(VisibleText.of(name)) \(fix)"
    }

    /// Parses `[user@]host[:port]`. Returns nil for an empty or malformed string.
    static func parse(_ text: String) -> Destination? {
        var rest = Substring(text)
        var user: String? = nil
        if let at = rest.lastIndex(of: "@") {
            user = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
            if user!.isEmpty { return nil }
        }
        var host = String(rest), port = 22
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { guard let p = Int(after.dropFirst()) else { return nil }; port = p }
            else if !after.isEmpty { return nil }
        } else if let colon = rest.lastIndex(of: ":"), rest.firstIndex(of: ":") == colon {
            guard let p = Int(rest[rest.index(after: colon)...]) else { return nil }
            host = String(rest[..<colon])
            port = p
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        return Destination(name: text, address: host, port: port, user: user, identityFile: nil, jump: nil)
    }
}

/// A host saved in the vault (the host store, collection "hosts", keyed by name).
struct HostRecord: Codable, Equatable {
    var name: String
    var address: String
    var port: Int
    var user: String?
    var identityFile: String?
    var tags: [String]?
    var jump: [String]?
    var keepaliveInterval: Int? = nil
    var keepaliveCountMax: Int? = nil
    /// The name of a saved identity (user, key, password) to log in with.
    var identity: String? = nil
    /// Agent forwarding (`--forward-agent yes`); nil, the default, is off.
    var forwardAgent: Bool? = nil
    /// A persistent session's shell runs in remote tmux (`--remote-tmux yes`), as if
    /// `ssh --persist --remote-tmux` was given; nil, the default, is off.
    var remoteTmux: Bool? = nil
    /// ssh_config's SendEnv (patterns of the user's variables) and SetEnv (`NAME=VALUE`),
    /// sent to the server for `ssh` and `exec` (RemoteEnvironment); nil is none.
    var sendEnv: [String]? = nil
    var setEnv: [String]? = nil
    /// ssh_config's CertificateFile: an OpenSSH certificate for the identity file's key
    /// (`--certificate`); nil looks for FILE-cert.pub beside the key.
    var certificateFile: String? = nil
    /// IdentityFile lines after the first (`--add-identity`, or imported), tried after
    /// `identityFile` in order, as ssh tries every IdentityFile.
    var moreIdentityFiles: [String]? = nil
    /// ssh_config's HostKeyAlias (`--host-key-alias`): the host key is looked up and saved
    /// under this name instead of the address (one key for a host reached by several names,
    /// or a tunnel's 127.0.0.1 that is really another host).
    var hostKeyAlias: String? = nil

    /// A name with `*` or `?`: a template for the names it matches (Vault.template).
    var isTemplate: Bool { name.contains("*") || name.contains("?") }

    var destination: Destination {
        Destination(name: name, address: address, port: port, user: user, identityFile: identityFile, jump: jump,
                    keepaliveInterval: keepaliveInterval, keepaliveCountMax: keepaliveCountMax, forwardAgent: forwardAgent,
                    sendEnv: sendEnv, setEnv: setEnv, certificateFile: certificateFile,
                    moreIdentityFiles: moreIdentityFiles, hostKeyAlias: hostKeyAlias)
    }
}

/// A saved identity (collection "identities"): a user name, a key file, and a password kept in
/// the secrets service (only its ID is stored here).
struct IdentityRecord: Codable, Equatable {
    var name: String
    var user: String?
    var keyFile: String?
    var passwordSecret: String?
    /// A private key stored in the secrets service (its ID), instead of a key file.
    var keySecret: String? = nil
    /// Whether a key or a password was stored with this identity on some device. Synced (the
    /// secret IDs above are not, and the secrets never), so that another device can say what
    /// it lacks when the server refuses it instead of a bare "Permission denied".
    var storedKey: Bool? = nil
    var storedPassword: Bool? = nil
}
