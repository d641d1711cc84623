import CLibSSH2
import Foundation
import Glibc
import TermhostSDK

/// Authenticates an SSH connection the way OpenSSH orders it: `none` first (a username-only
/// identity may need nothing more), then public keys (the agent's, then key files), then
/// keyboard-interactive, then password (3 tries). Secrets typed by the user are never stored,
/// cached or logged; the buffers holding them are wiped after use.
///
/// Multi-step login (`AuthenticationMethods publickey,password`, as on 2FA bastions): a key
/// the server takes with "partial success" is not a refusal. libssh2 reports it as an
/// unverified key; the methods that can continue are then asked for again, and the login goes
/// on with them (a password, keyboard-interactive), as OpenSSH's ssh does.
struct Authenticator {
    let connection: SSHConnection
    let interaction: ConnectionPrompts

    var session: OpaquePointer { connection.session }
    var user: String { connection.user }

    func authenticate() throws(SSHError) {
        ServerDisconnect.watch(session)
        var methods = advertisedMethods()
        try endIfDisconnected(offered: [])
        // sshd sends its Banner with the answer to the first request, before authentication.
        if let show = interaction.showBanner, let banner = UserauthBanner.shown(session) { show(banner) }
        if libssh2_userauth_authenticated(session) != 0 { return }
        var tried: [String] = []
        var rsaRefused = false
        var offered: [OfferedKey] = []
        if methods.contains("publickey") {
            tried.append("publickey")
            var partial = false
            if agentAuth(offered: &offered, partial: &partial) { return }
            try endIfDisconnected(offered: offered)
            if !partial {
                switch try keyFileAuth(offered: &offered, partial: &partial) {
                case .success: return
                case .failed(let rsa): rsaRefused = rsa
                }
                try endIfDisconnected(offered: offered)
            }
            // A key taken with partial success: what the server wants next replaces the list.
            if partial, libssh2_userauth_authenticated(session) == 0 {
                let next = advertisedMethods()
                if !next.isEmpty && next != methods { methods = next }
                try endIfDisconnected(offered: offered)
            }
        }
        // Without a way to ask, keyboard-interactive would send the server empty answers (a
        // failed login that may count towards a lockout): skip it unless a saved password can
        // answer.
        let canAsk = interaction.host.interact?.canPrompt(scene: interaction.scene) ?? false
        if methods.contains("keyboard-interactive") && (canAsk || connection.destination.passwordSecret != nil) {
            tried.append("keyboard-interactive")
            if try keyboardInteractive(useSaved: true) { return }
            // PAM ends the round after a wrong answer: if the saved password was refused, ask.
            try endIfDisconnected(offered: offered)
            if connection.destination.passwordSecret != nil && canAsk {
                interaction.notify("The saved password was refused.")
                if try keyboardInteractive(useSaved: false) { return }
                try endIfDisconnected(offered: offered)
            }
        }
        if methods.contains("password") {
            tried.append("password")
            if try password() { return }
            try endIfDisconnected(offered: offered)
        }
        var message = "\(VisibleText.of(user))@\(connection.shownAddress): Permission denied (\(methods.joined(separator: ",")))."
        if let hint = connection.destination.missingCredentialsHint { message += "\n" + hint }
        if rsaRefused && SSHConnection.libssh2LacksRSASHA2 {
            message += "\nAn RSA key was refused: this libssh2 (\(SSHConnection.libssh2Version)) can only sign with ssh-rsa (SHA-1), which OpenSSH 8.8 and later reject. Use an ed25519 or ECDSA key (ssh-keygen -t ed25519), or a host with libssh2 1.11 or later."
        }
        throw SSHError(message, kind: .refused, cause: .credentials)
    }

    /// Once the server has disconnected nothing more can be tried: OpenSSH's report of the
    /// disconnect, and when sshd's MaxAuthTries was used up, the keys that used it up and how
    /// to offer only the right one.
    func endIfDisconnected(offered: [OfferedKey]) throws(SSHError) {
        guard let disconnect = connection.sessionContext.disconnect else { return }
        var lines = [disconnect.message(address: connection.shownAddress, port: connection.destination.port)]
        if !offered.isEmpty { lines.append("Authentication tried: " + offered.map(\.shown).joined(separator: ", ")) }
        if disconnect.isTooManyAuthenticationFailures {
            lines.append("The server counts each key offered as a failed try. Choose the key for this host: " +
                         "termhost hosts add|edit NAME ... --identity FILE (or --use-identity with an identity's --key); " +
                         "a host with its own key is offered only that key, as OpenSSH's IdentitiesOnly does.")
        }
        throw SSHError(lines.joined(separator: "\n"), kind: .refused)
    }

    /// The methods the server accepts for this user; asking sends the `none` request.
    func advertisedMethods() -> [String] {
        guard let list = libssh2_userauth_list(session, user, UInt32(user.utf8.count)) else { return [] }
        return String(cString: list).split(separator: ",").map(String.init)
    }

    /// The agent's keys, in its order; for a host with a key of its own, only the agent's copy
    /// of that key (OpenSSH's IdentitiesOnly): every other key offered would count towards the
    /// server's MaxAuthTries before the host's own key had its turn.
    /// `partial` turns true when the server took a key but wants another method too.
    func agentAuth(offered: inout [OfferedKey], partial: inout Bool) -> Bool {
        // The user's agent: in the daemon, the client's SSH_AUTH_SOCK, which libssh2 (reading
        // the daemon's own environment) would not find by itself.
        guard let socket = interaction.agentSocket else { return false }
        let only = ownPublicKeys
        if only?.isEmpty == true { return false }
        guard let agent = libssh2_agent_init(session) else { return false }
        defer { libssh2_agent_disconnect(agent); libssh2_agent_free(agent) }
        libssh2_agent_set_identity_path(agent, socket)
        guard libssh2_agent_connect(agent) == 0, libssh2_agent_list_identities(agent) == 0 else { return false }
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>? = nil
        var identity: UnsafeMutablePointer<libssh2_agent_publickey>? = nil
        while connection.sessionContext.disconnect == nil, libssh2_agent_get_identity(agent, &identity, previous) == 0, let key = identity {
            previous = identity
            let blob = Array(UnsafeBufferPointer(start: key.pointee.blob, count: key.pointee.blob_len))
            if let only, !only.contains(blob) { continue }
            // The comment is the agent's, set by whoever added the key: shown, not obeyed.
            let comment = key.pointee.comment.map { String(cString: $0) } ?? ""
            offered.append(OfferedKey(source: "agent key '\(VisibleText.of(comment))'", blob: blob))
            let rc = libssh2_agent_userauth(agent, user, identity)
            if rc == 0 { return true }
            if rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED { partial = true; return false }
        }
        return false
    }

    /// The public keys of the host's own key (its identity file, its identity's stored key);
    /// nil when the host has none, so any key may be offered. Empty when it has one whose public
    /// half cannot be read without the passphrase (a PEM key without its `.pub`).
    var ownPublicKeys: [[UInt8]]? {
        let destination = connection.destination
        guard !ownKeyFiles.isEmpty || destination.keySecret != nil else { return nil }
        var keys: [[UInt8]] = []
        if let id = destination.keySecret, var key = try? interaction.host.secrets?.get(id) {
            defer { for i in key.indices { key[i] = 0 } }
            if let blob = OfferedKey.publicBlob(ofPrivateKey: key) { keys.append(blob) }
        }
        if !ownKeyFiles.isEmpty {
            for file in keyFiles {
                if let text = try? String(contentsOfFile: file, encoding: .utf8), let blob = OfferedKey.publicBlob(ofKeyFile: file, text: text) {
                    keys.append(blob)
                }
            }
        }
        return keys
    }

    enum KeyResult { case success, failed(rsaRefused: Bool) }

    /// The host's identity files (their `%` tokens expanded), or OpenSSH's defaults that exist.
    var keyFiles: [String] {
        if !ownKeyFiles.isEmpty { return ownKeyFiles.compactMap { try? expanded($0).get() } }
        return ["id_ed25519", "id_ed25519_sk", "id_ecdsa", "id_ecdsa_sk", "id_rsa"].map { homeDirectory + "/.ssh/" + $0 }
            .filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// `partial` turns true when the server took a key but wants another method too (the keys
    /// after it are not offered then).
    /// The host's own key files as saved: its identity file, then the ones added after it.
    var ownKeyFiles: [String] {
        (connection.destination.identityFile.map { [$0] } ?? []) + (connection.destination.moreIdentityFiles ?? [])
    }

    func keyFileAuth(offered: inout [OfferedKey], partial: inout Bool) throws(SSHError) -> KeyResult {
        var rsaRefused = false
        // A key stored with the identity comes first; it is handed to libssh2 from memory and
        // wiped after the call.
        if connection.sessionContext.disconnect == nil, let id = connection.destination.keySecret, var key = try? interaction.host.secrets?.get(id) {
            defer { for i in key.indices { key[i] = 0 } }
            offered.append(OfferedKey(source: "the key stored with the host's identity", blob: OfferedKey.publicBlob(ofPrivateKey: key)))
            let ok = key.withUnsafeBytes { bytes in
                libssh2_userauth_publickey_frommemory(session, user, user.utf8.count, nil, 0,
                                                      bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, nil) == 0
            }
            if ok { return .success }
            interaction.host.log(.warning, "the key stored with this host's identity was refused: \(connection.lastError())")
        }
        for file in ownKeyFiles {
            if case .failure(let why) = expanded(file) { interaction.warning("Identity file \(why.message)") }
        }
        let certificate = configuredCertificate()
        for file in keyFiles {
            // A disconnect (sshd's MaxAuthTries) ends the keys: the rest were never offered.
            if connection.sessionContext.disconnect != nil { break }
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                interaction.host.log(.warning, "cannot read identity file \(VisibleText.of(file))")
                continue
            }
            // Read once: the skip notice, the certificate's match and the list of offered keys.
            let keyBlob = OfferedKey.publicBlob(ofKeyFile: file, text: text)
            if let skipped = SecurityKey.skipNotice(file: file, blob: keyBlob) {
                interaction.warning(skipped)
                continue
            }
            let rc = offer(file, key: keyBlob, certificate: certificate, passphrase: nil, offered: &offered)
            if rc == 0 { return .success }
            if rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED {
                offered.append(OfferedKey(source: VisibleText.of(file), blob: keyBlob))
                partial = true
                return .failed(rsaRefused: false)
            }
            // LIBSSH2_ERROR_FILE: the key could not be read without its passphrase, so it was not sent.
            var sent = rc != LIBSSH2_ERROR_FILE
            if isEncrypted(text) && connection.sessionContext.disconnect == nil {
                guard let interact = interaction.host.interact else { continue }
                var passphrase: String
                do { passphrase = try interact.prompt("Enter passphrase for key '\(VisibleText.of(file))': ", scene: interaction.scene, echo: false) }
                catch { throw SSHError("\(VisibleText.of(user))@\(connection.shownAddress): cannot ask for the passphrase of \(VisibleText.of(file)): \(error)", kind: .refused, cause: .credentials) }
                defer { passphrase = String(repeating: "\0", count: passphrase.utf8.count) }
                let unlocked = offer(file, key: keyBlob, certificate: certificate, passphrase: passphrase, offered: &offered)
                if unlocked == 0 { return .success }
                if unlocked == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED {
                    offered.append(OfferedKey(source: VisibleText.of(file), blob: keyBlob))
                    partial = true
                    return .failed(rsaRefused: false)
                }
                if unlocked != LIBSSH2_ERROR_FILE { sent = true }
            }
            guard sent else { continue }
            offered.append(OfferedKey(source: VisibleText.of(file), blob: keyBlob))
            if isRSA(file: file, text: text) { rsaRefused = true }
        }
        return .failed(rsaRefused: rsaRefused)
    }

    /// The host's `--certificate` (CertificateFile), read once per login: nil when it has none
    /// (each key's FILE-cert.pub is looked for then). A problem with it, or a certificate that
    /// certifies none of the host's keys, is said once here.
    func configuredCertificate() -> UserCertificate.Found? {
        guard let path = connection.destination.certificateFile else { return nil }
        let found: UserCertificate.Found
        switch expanded(path) {
        case .success(let p): found = UserCertificate.find(for: "", configured: p, home: homeDirectory)
        case .failure(let why):
            interaction.warning("Certificate file \(why.message)")
            return UserCertificate.Found.none
        }
        switch found {
        case .unusable(let why): interaction.warning(why)
        case .certificate(let certPath, let blob):
            let keys = keyFiles.compactMap { file in (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { OfferedKey.publicBlob(ofKeyFile: file, text: $0) } }
            if !keys.contains(where: { UserCertificate.certifies(blob, key: $0) }) {
                interaction.warning("Certificate \(VisibleText.of(certPath)) certifies none of this host's keys; not offered")
            }
        case .none: break
        }
        return found
    }

    /// One key file: with its certificate first when it has one that certifies this very key
    /// (the host's --certificate, else FILE-cert.pub), then alone, as ssh offers both. libssh2's
    /// result of the last attempt; LIBSSH2_ERROR_FILE when the private key cannot be read
    /// without its passphrase (asked for, then this is called again).
    func offer(_ file: String, key: [UInt8]?, certificate configured: UserCertificate.Found?, passphrase: String?,
               offered: inout [OfferedKey]) -> Int32 {
        let found = configured ?? UserCertificate.find(for: file, configured: nil, home: homeDirectory)
        if case .unusable(let why) = found, configured == nil, passphrase == nil { interaction.warning(why) }
        // A certificate of another key would be taken by the server and its signature refused
        // (a "partial" answer libssh2 cannot tell from a real one): only this key's is offered.
        if case .certificate(let path, let blob) = found, let key, UserCertificate.certifies(blob, key: key) {
            guard let library = UserCertificate.libraryCannotSign else {
                return offerCertificate(path, blob: blob, file: file, passphrase: passphrase, offered: &offered)
            }
            if passphrase == nil {
                interaction.warning("Certificate \(VisibleText.of(path)) not offered: libssh2 \(library), which this build loads, cannot sign with a certificate (1.11 can); offering \(VisibleText.of(file)) without it")
            }
        }
        return libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), nil, file, passphrase)
    }

    /// The certificate with its key, then (unless that ended it) the key alone.
    private func offerCertificate(_ path: String, blob: [UInt8], file: String, passphrase: String?, offered: inout [OfferedKey]) -> Int32 {
        let rc = libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), path, file, passphrase)
        if rc == 0 || rc == LIBSSH2_ERROR_FILE || rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED { return rc }
        offered.append(OfferedKey(source: VisibleText.of(path), blob: blob))
        if connection.sessionContext.disconnect != nil { return rc }
        return libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), nil, file, passphrase)
    }

    /// A key or certificate path with ssh_config's tokens expanded for this connection.
    func expanded(_ path: String) -> Result<String, PathTokenError> {
        PathTokens.expand(path, destination: connection.destination, remoteUser: user, localUser: SSHConnection.localUser(),
                          home: homeDirectory, variable: interaction.variable)
    }

    func isEncrypted(_ pem: String) -> Bool {
        if pem.contains("ENCRYPTED") { return true }
        // OpenSSH's own format says so in its header: "aes256-ctr" / "bcrypt" instead of "none".
        guard pem.contains("BEGIN OPENSSH PRIVATE KEY") else { return false }
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let raw = Base64.decode(Substring(body)) else { return false }
        return String(decoding: raw.prefix(64), as: UTF8.self).contains("bcrypt")
    }

    func isRSA(file: String, text: String) -> Bool {
        if text.contains("BEGIN RSA PRIVATE KEY") { return true }
        if let pub = try? String(contentsOfFile: file + ".pub", encoding: .utf8) { return pub.hasPrefix("ssh-rsa ") }
        return false
    }

    func keyboardInteractive(useSaved: Bool) throws(SSHError) -> Bool {
        // A saved password answers the first password-looking prompt (PAM's "Password:").
        if useSaved, let id = connection.destination.passwordSecret, let saved = try? interaction.host.secrets?.get(id) {
            connection.sessionContext.savedPassword = String(decoding: saved, as: UTF8.self)
        }
        defer { connection.sessionContext.savedPassword = nil }
        return libssh2_userauth_keyboard_interactive_ex(session, user, UInt32(user.utf8.count), keyboardInteractiveCallback) == 0
    }

    func password() throws(SSHError) -> Bool {
        // A password saved with the host's identity is tried first, once; it never leaves the
        // secrets service except for this call.
        if let id = connection.destination.passwordSecret, var saved = try? interaction.host.secrets?.get(id) {
            defer { for i in saved.indices { saved[i] = 0 } }
            let ok = saved.withUnsafeBytes { bytes in
                libssh2_userauth_password_ex(session, user, UInt32(user.utf8.count),
                                             bytes.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32(bytes.count), nil) == 0
            }
            if ok { return true }
            interaction.notify("The saved password was refused.")
        }
        guard let interact = interaction.host.interact else { return false }
        for attempt in 1...3 {
            var answer: String
            do { answer = try interact.prompt("\(VisibleText.of(user))@\(connection.shownAddress)'s password: ", scene: interaction.scene, echo: false) }
            catch { throw SSHError("\(VisibleText.of(user))@\(connection.shownAddress): cannot ask for the password: \(error)", kind: .refused, cause: .credentials) }
            defer { answer = String(repeating: "\0", count: answer.utf8.count) }
            if libssh2_userauth_password_ex(session, user, UInt32(user.utf8.count), answer, UInt32(answer.utf8.count), nil) == 0 { return true }
            if attempt < 3 { interaction.notify("Permission denied, please try again.") }
        }
        return false
    }
}

/// libssh2's keyboard-interactive callback: shows the server's name and instruction and asks each
/// prompt with its echo flag. All three are the server's text, shown with VisibleText: an escape
/// sequence in them reads as `\033[2J` instead of clearing the screen or setting the title, and a
/// newline inside one reads as `\012`, so a prompt cannot draw a fake line (another host's
/// passphrase question) of its own. One trailing newline (PAM ends its messages with one) is
/// dropped first. Zero-prompt rounds and empty answers are valid.
/// Responses are malloc'ed (libssh2 frees them); nothing typed is kept.
private let keyboardInteractiveCallback: @convention(c) (
    UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32, Int32,
    UnsafePointer<LIBSSH2_USERAUTH_KBDINT_PROMPT>?, UnsafeMutablePointer<LIBSSH2_USERAUTH_KBDINT_RESPONSE>?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Void = { name, nameLength, instruction, instructionLength, count, prompts, responses, abstract in
    guard let abstract, let raw = abstract.pointee else { return }
    let context = Unmanaged<SessionContext>.fromOpaque(raw).takeUnretainedValue()
    func text(_ p: UnsafePointer<CChar>?, _ n: Int) -> String {
        guard let p, n > 0 else { return "" }
        var bytes = UnsafeRawBufferPointer(start: p, count: n)[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        return VisibleText.of(bytes: bytes)
    }
    let header = [text(name, Int(nameLength)), text(instruction, Int(instructionLength))].filter { !$0.isEmpty }
    if !header.isEmpty { context.interaction.notify(header.joined(separator: "\n")) }
    for i in 0..<Int(max(count, 0)) {
        guard let prompts, let responses else { return }
        let prompt = text(UnsafeRawPointer(prompts[i].text).map { $0.assumingMemoryBound(to: CChar.self) }, Int(prompts[i].length))
        var answer = ""
        if let saved = context.savedPassword, prompts[i].echo == 0, prompt.lowercased().contains("password") {
            answer = saved
            context.savedPassword = nil   // once: a refusal then asks the user
        } else if let interact = context.interaction.host.interact, !context.failed {
            do { answer = try interact.prompt(prompt, scene: context.interaction.scene, echo: prompts[i].echo != 0) }
            catch { context.failed = true }
        }
        let copy = strdup(answer)
        responses[i].text = copy
        responses[i].length = UInt32(answer.utf8.count)
        answer = String(repeating: "\0", count: answer.utf8.count)
    }
}

extension SSHConnection {
    static var libssh2Version: String { libssh2_version(0).map { String(cString: $0) } ?? "unknown" }
    /// rsa-sha2-256/512 signatures arrived in libssh2 1.11.0; before it RSA keys sign with SHA-1.
    static var libssh2LacksRSASHA2: Bool { libssh2_version(0x010B00) == nil }
}
