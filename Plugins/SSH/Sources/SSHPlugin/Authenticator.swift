import CLibSSH2
import Foundation
import Glibc
import TermhostSDK

/// Authenticates an SSH connection the way OpenSSH orders it: `none` first (a username-only
/// identity may need nothing more), then public keys (the agent's, then key files), then
/// keyboard-interactive, then password (3 tries). Secrets typed by the user are never stored,
/// cached or logged; the buffers holding them are wiped after use.
struct Authenticator {
    let connection: SSHConnection
    let interaction: ConnectionPrompts

    var session: OpaquePointer { connection.session }
    var user: String { connection.user }

    func authenticate() throws(SSHError) {
        let methods = advertisedMethods()
        if libssh2_userauth_authenticated(session) != 0 { return }
        var tried: [String] = []
        var rsaRefused = false
        if methods.contains("publickey") {
            tried.append("publickey")
            if agentAuth() { return }
            switch try keyFileAuth() {
            case .success: return
            case .failed(let rsa): rsaRefused = rsa
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
            if connection.destination.passwordSecret != nil && canAsk {
                interaction.notify("The saved password was refused.")
                if try keyboardInteractive(useSaved: false) { return }
            }
        }
        if methods.contains("password") {
            tried.append("password")
            if try password() { return }
        }
        var message = "\(VisibleText.of(user))@\(connection.shownAddress): Permission denied (\(methods.joined(separator: ",")))."
        if rsaRefused && SSHConnection.libssh2LacksRSASHA2 {
            message += "\nAn RSA key was refused: this libssh2 (\(SSHConnection.libssh2Version)) can only sign with ssh-rsa (SHA-1), which OpenSSH 8.8 and later reject. Use an ed25519 or ECDSA key (ssh-keygen -t ed25519), or a host with libssh2 1.11 or later."
        }
        throw SSHError(message, kind: .refused)
    }

    /// The methods the server accepts for this user; asking sends the `none` request.
    func advertisedMethods() -> [String] {
        guard let list = libssh2_userauth_list(session, user, UInt32(user.utf8.count)) else { return [] }
        return String(cString: list).split(separator: ",").map(String.init)
    }

    func agentAuth() -> Bool {
        guard ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"] != nil, let agent = libssh2_agent_init(session) else { return false }
        defer { libssh2_agent_disconnect(agent); libssh2_agent_free(agent) }
        guard libssh2_agent_connect(agent) == 0, libssh2_agent_list_identities(agent) == 0 else { return false }
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>? = nil
        var identity: UnsafeMutablePointer<libssh2_agent_publickey>? = nil
        while libssh2_agent_get_identity(agent, &identity, previous) == 0 {
            if libssh2_agent_userauth(agent, user, identity) == 0 { return true }
            previous = identity
        }
        return false
    }

    enum KeyResult { case success, failed(rsaRefused: Bool) }

    /// The host's identity file, or OpenSSH's defaults that exist.
    var keyFiles: [String] {
        if let file = connection.destination.identityFile {
            return [file.hasPrefix("~/") ? homeDirectory + file.dropFirst() : file]
        }
        return ["id_ed25519", "id_ecdsa", "id_rsa"].map { homeDirectory + "/.ssh/" + $0 }
            .filter { FileManager.default.fileExists(atPath: $0) }
    }

    func keyFileAuth() throws(SSHError) -> KeyResult {
        var rsaRefused = false
        // A key stored with the identity comes first; it is handed to libssh2 from memory and
        // wiped after the call.
        if let id = connection.destination.keySecret, var key = try? interaction.host.secrets?.get(id) {
            defer { for i in key.indices { key[i] = 0 } }
            let ok = key.withUnsafeBytes { bytes in
                libssh2_userauth_publickey_frommemory(session, user, user.utf8.count, nil, 0,
                                                      bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, nil) == 0
            }
            if ok { return .success }
            interaction.host.log(.warning, "the key stored with this host's identity was refused: \(connection.lastError())")
        }
        for file in keyFiles {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                interaction.host.log(.warning, "cannot read identity file \(VisibleText.of(file))")
                continue
            }
            if libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), nil, file, nil) == 0 { return .success }
            if isEncrypted(text) {
                guard let interact = interaction.host.interact else { continue }
                var passphrase: String
                do { passphrase = try interact.prompt("Enter passphrase for key '\(VisibleText.of(file))': ", scene: interaction.scene, echo: false) }
                catch { throw SSHError("\(VisibleText.of(user))@\(connection.shownAddress): cannot ask for the passphrase of \(VisibleText.of(file)): \(error)", kind: .refused) }
                defer { passphrase = String(repeating: "\0", count: passphrase.utf8.count) }
                if libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), nil, file, passphrase) == 0 { return .success }
            }
            if isRSA(file: file, text: text) { rsaRefused = true }
        }
        return .failed(rsaRefused: rsaRefused)
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
            catch { throw SSHError("\(VisibleText.of(user))@\(connection.shownAddress): cannot ask for the password: \(error)", kind: .refused) }
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
