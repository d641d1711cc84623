import CLibSSH2
import Foundation
import Glibc
import TermhostSDK

/// Checks the server's host key inside the connection attempt, against OpenSSH's files and the
/// keys accepted in Termhost on the devices of the vault (SyncedHostKeys), as OpenSSH does:
/// known -> go on; revoked or changed -> refuse with OpenSSH's warning; unknown -> show the
/// fingerprint and ask (accept once, accept and save, reject); without a terminal, refuse
/// (fail closed).
enum HostKeyTrust {
    static var userKnownHosts: String { homeDirectory + "/.ssh/known_hosts" }
    static let systemKnownHosts = "/etc/ssh/ssh_known_hosts"
    /// Termhost's own known_hosts decides trust: one that another user owns or can write (an
    /// `@revoked` line, or a trusted key, put there by someone else) is refused, naming the fix.
    static func checkOwnKnownHosts() throws(SSHError) {
        let path = termhostKnownHosts
        var st = stat()
        guard lstat(path, &st) == 0 else { return }   // absent: nothing vouched for
        if st.st_mode & S_IFMT == S_IFLNK {
            throw SSHError("\(VisibleText.of(path)) is a symbolic link: refused (Termhost's known_hosts is never read through one)")
        }
        if st.st_uid != geteuid() && st.st_uid != 0 {
            throw SSHError("\(VisibleText.of(path)) is owned by uid \(st.st_uid), not by you: refused, since whoever owns it decides which host keys are trusted")
        }
        if st.st_mode & 0o022 != 0 {
            throw SSHError("\(VisibleText.of(path)) can be written by its group or others (mode \(String(st.st_mode & 0o777, radix: 8))): refused, since anyone could have added a trusted key; check it, then run: chmod 600 \(VisibleText.of(path))")
        }
    }

    /// Keys Termhost itself vouches for (the sandbox's); read after OpenSSH's files.
    static var termhostKnownHosts: String {
        let env = ProcessInfo.processInfo.environment
        let data = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? homeDirectory + "/.local/share"
        return data + "/termhost/known_hosts"
    }

    /// The files and the synced records, read and parsed once per connection attempt, before
    /// the handshake (their key types order the host key algorithms offered); a file that exists
    /// but cannot be read whole, or a store that cannot be read, ends the attempt here (fail
    /// closed).
    static func knownHosts(interaction: ConnectionPrompts) throws(SSHError) -> KnownHosts {
        try checkOwnKnownHosts()
        var known = try KnownHosts(files: [userKnownHosts, systemKnownHosts, termhostKnownHosts])
        if let store = interaction.host.store {
            do throws(PluginError) {
                let (records, warnings) = try SyncedHostKeys.load(store)
                known.add(synced: records, warnings: warnings)
            } catch {
                throw SSHError("""
                ssh: cannot read the synced known hosts: \(error.message).
                Host key verification failed: termhost does not connect while the host keys it checks cannot be read.
                """, kind: .refused)
            }
        }
        for warning in known.warnings { interaction.host.log(.warning, warning) }
        return known
    }

    /// OpenSSH's changed-key warning, in its words; `offending` says where the key Termhost holds
    /// for the host came from (a known_hosts line, or the synced records).
    private static func changedKey(_ c: SSHConnection, label: String, fingerprint: String, offending: String) -> SSHError {
        SSHError("""
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
        @    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
        IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
        Someone could be eavesdropping on you right now (man-in-the-middle attack)!
        It is also possible that a host key has just been changed.
        The fingerprint for the \(label) key sent by the remote host is
        \(fingerprint).
        Please contact your system administrator.
        \(offending)
        Host key for \(c.hostLabel) has changed and termhost refuses to connect: \
        it never offers to accept a changed key.
        Host key verification failed.
        """, kind: .refused, cause: .changedHostKey)
    }

    static func verify(_ c: SSHConnection, against known: KnownHosts, interaction: ConnectionPrompts) throws(SSHError) {
        var length = 0
        var type: Int32 = 0
        guard let raw = libssh2_session_hostkey(c.session, &length, &type), length > 0 else {
            throw SSHError("ssh: \(c.hostLabel) sent no host key")
        }
        var key = Array(UnsafeRawBufferPointer(start: raw, count: length))
        if HostCertificate.isCertificate(key) {
            guard let plain = try certificate(key, c, known: known, interaction: interaction) else { return }
            key = plain
        }
        let keyType = KnownHosts.keyTypeName(in: key) ?? "unknown"
        let fingerprint = KnownHosts.fingerprint(key)
        let label = displayName(keyType)
        switch known.check(host: c.destination.hostKeyName, port: c.destination.hostKeyPort, keyType: keyType, key: key) {
        case .known, .knownSynced:
            return
        case .revoked(let file, let line):
            throw revoked(c, what: "\(label) host key", label: label, fingerprint: fingerprint, file: file, line: line)
        case .changed(let file, let line):
            throw changedKey(c, label: label, fingerprint: fingerprint, offending: """
            Add correct host key in \(VisibleText.of(file)) to get rid of this message.
            Offending \(label) key in \(VisibleText.of(file)):\(line)
            """)
        case .changedSynced(let synced):
            throw changedKey(c, label: label, fingerprint: fingerprint, offending: """
            Offending \(label) key in the synced known hosts (accepted in termhost on a device of the vault): \
            \(KnownHosts.fingerprint(synced))
            """)
        case .unknown(let otherTypes):
            var text = "The authenticity of host '\(c.hostLabel)' can't be established.\n\(label) key fingerprint is \(fingerprint)."
            if !otherTypes.isEmpty {
                text += "\nThis host key is known by other names or types: \(VisibleText.of(otherTypes.joined(separator: ", "))) is already known for it."
            }
            guard let interact = interaction.host.interact else { throw SSHError("Host key verification failed: the host offers no way to ask", cause: .unknownHostKey) }
            interact.notify(text, scene: interaction.scene)
            let choice: Int
            do {
                choice = try interact.choose("Trust this host key?", from: ["accept once", "accept and save to \(VisibleText.of(userKnownHosts))", "reject"],
                                             scene: interaction.scene)
            } catch {
                throw SSHError("\(text)\nHost key verification failed: \(error)", kind: .refused, cause: .unknownHostKey)
            }
            switch choice {
            case 0:
                return
            case 1:
                // As OpenSSH: the user accepted the key, so a failed save warns and the connection
                // goes on.
                do throws(SSHError) {
                    try save(host: c.destination.hostKeyName, port: c.destination.hostKeyPort, keyType: keyType, key: key)
                    interaction.notify("Warning: Permanently added '\(c.hostLabel)' (\(label)) to the list of known hosts.")
                } catch {
                    interaction.notify("Failed to add the host to the list of known hosts (\(VisibleText.of(userKnownHosts))): \(error.message)")
                }
                // Also for the other devices of the vault; the same rule: a failure warns.
                if let store = interaction.host.store {
                    do throws(PluginError) {
                        try SyncedHostKeys.save(store, host: c.destination.hostKeyName, port: c.destination.hostKeyPort, key: key)
                    } catch {
                        interaction.notify("Failed to add the host key to the synced known hosts: \(error.message)")
                    }
                }
            default:
                throw SSHError("Host key verification failed: rejected by the user.", kind: .refused)
            }
        }
    }

    /// OpenSSH's revoked-key warning, in its words; `what` is the host key or its CA's key.
    private static func revoked(_ c: SSHConnection, what: String, label: String, fingerprint: String, file: String, line: Int) -> SSHError {
        SSHError("""
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
        @       WARNING: REVOKED HOST KEY DETECTED!               @
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
        The \(what) for \(c.hostLabel) is marked as revoked in \(VisibleText.of(file)):\(line).
        This could mean that a stolen key is being used to impersonate this host.
        \(label) key fingerprint is \(fingerprint).
        Host key verification failed.
        """, kind: .refused, cause: .changedHostKey)
    }

    /// A host certificate, as ssh checks one. Refused: a certificate of another type than the
    /// handshake agreed on, one whose key or CA's key is `@revoked`, one whose signature does not
    /// verify with the CA key it names. Trusted (nil): its CA is in a `@cert-authority` line for
    /// the host and every rule of HostCertificate holds. Otherwise (no such line, or a rule
    /// broken, which is said) the plain key inside is returned and checked as any host key is,
    /// as ssh does ("No matching CA found. Retry with plain key").
    private static func certificate(_ blob: [UInt8], _ c: SSHConnection, known: KnownHosts, interaction: ConnectionPrompts) throws(SSHError) -> [UInt8]? {
        let type = KnownHosts.keyTypeName(in: blob) ?? "unknown"
        let agreed = libssh2_session_methods(c.session, LIBSSH2_METHOD_HOSTKEY).map { String(cString: $0) } ?? ""
        guard let cert = HostCertificate(blob), cert.type == HostCertificate.certificateType(ofAlgorithm: agreed) else {
            throw SSHError("ssh: \(c.hostLabel) sent a host certificate termhost cannot read or that is not the agreed \(VisibleText.of(agreed)) (\(VisibleText.of(type))).\nHost key verification failed.", kind: .refused)
        }
        for (key, what) in [(cert.plainKey, "\(displayName(type)) host key"), (cert.signatureKey, "certificate authority key of the host certificate")] {
            if let r = known.revocation(of: key) {
                let label = displayName(KnownHosts.keyTypeName(in: key) ?? "unknown")
                throw revoked(c, what: what, label: label, fingerprint: KnownHosts.fingerprint(key), file: r.file, line: r.line)
            }
        }
        let caFingerprint = KnownHosts.fingerprint(cert.signatureKey)
        // First, so that nothing else the certificate says is shown as the CA's before it is.
        guard HostKeySignature.isValid(cert.signature, by: cert.signatureKey, of: cert.signedBytes, session: c.session) else {
            throw SSHError("ssh: the host certificate of \(c.hostLabel) names the CA \(caFingerprint) but is not signed by it (its signature does not verify).\nHost key verification failed.", kind: .refused)
        }
        let plainType = UserCertificate.keyType(ofCertificateType: type)
        guard let ca = known.certificateAuthority(host: c.destination.hostKeyName, port: c.destination.hostKeyPort, key: cert.signatureKey) else {
            interaction.host.log(.info, "\(c.hostLabel) showed a host certificate whose CA (\(caFingerprint)) no @cert-authority line names for it: its plain key is checked instead")
            return cert.plainKey
        }
        let shown = "the \(displayName(plainType)) host certificate of \(c.hostLabel) (ID \"\(VisibleText.of(cert.keyID))\", serial \(cert.serial)), " +
            "signed by the CA \(caFingerprint) of \(VisibleText.of(ca.file)):\(ca.line)"
        if let problem = cert.problem(host: c.destination.hostKeyName, now: UInt64(max(0, time(nil)))) {
            interaction.warning("ssh: \(shown): \(problem); checking its plain key instead")
            return cert.plainKey
        }
        interaction.host.log(.info, "trusted \(shown)")
        return nil
    }

    /// Appends a hashed entry to the user's known_hosts (creating ~/.ssh 0700 and the file 0600).
    ///
    /// Appended in place, not rewritten and renamed: the file keeps its mode, owner, hard links
    /// and anything else set on it, and OpenSSH appends the same way. Safe appending:
    /// - a symbolic link in the file's place is not followed (O_NOFOLLOW): someone able to plant
    ///   one could otherwise make us write a line into a file of their choosing;
    /// - only a regular file is written (not a FIFO or a device);
    /// - an exclusive lock serializes two termhost processes saving at once;
    /// - a file whose last line has no newline gets one first, so the new line is not glued to it;
    /// - the line goes out in one write; if it cannot be written whole, the file is cut back to
    ///   its old length, so a failed save leaves no half line.
    static func save(host: String, port: Int, keyType: String, key: [UInt8]) throws(SSHError) {
        let path = userKnownHosts
        let dir = PathText.parent(path)
        mkdir(dir, 0o700)
        func failure(_ reason: String) -> SSHError { SSHError("cannot add the host key to \(VisibleText.of(path)): \(reason)") }
        // Read and write: the last byte is read back to see whether the file ends with a newline.
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw failure(errno == ELOOP ? "it is a symbolic link, which termhost does not write through"
                                         : String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure("it is not a regular file") }
        guard flock(fd, LOCK_EX) == 0 else { throw failure(String(cString: strerror(errno))) }
        // The size again under the lock: another process may have appended meanwhile.
        guard fstat(fd, &info) == 0 else { throw failure(String(cString: strerror(errno))) }
        let oldSize = info.st_size
        var line = Array((KnownHosts.hashedLine(host: host, port: port, keyType: keyType, key: key) + "\n").utf8)
        if oldSize > 0 {
            var last: UInt8 = 0
            guard pread(fd, &last, 1, oldSize - 1) == 1 else { throw failure(String(cString: strerror(errno))) }
            if last != UInt8(ascii: "\n") { line.insert(UInt8(ascii: "\n"), at: 0) }
        }
        var written = 0
        while written < line.count {
            let n = line.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let reason = String(cString: strerror(errno))
                _ = ftruncate(fd, oldSize)
                throw failure(reason)
            }
            written += n
        }
        _ = fsync(fd)
    }

    /// "ssh-ed25519" -> "ED25519", as OpenSSH names key types in messages.
    static func displayName(_ keyType: String) -> String {
        switch keyType {
        case "ssh-ed25519": "ED25519"
        case "ssh-rsa": "RSA"
        case _ where keyType.hasPrefix("ecdsa-sha2-"): "ECDSA"
        case SecurityKey.ed25519: "ED25519-SK"
        case SecurityKey.ecdsa: "ECDSA-SK"
        // A certificate (PROTOCOL.certkeys), as ssh -v names it: ED25519-CERT.
        case _ where keyType.hasSuffix(UserCertificate.typeSuffix): displayName(UserCertificate.keyType(ofCertificateType: keyType)) + "-CERT"
        // From the key blob the server sent: shown, not obeyed.
        default: VisibleText.of(keyType)
        }
    }
}
