import CLibSSH2
import Foundation
import Glibc

/// Checks the server's host key inside the connection attempt, against OpenSSH's files, as
/// OpenSSH does: known -> go on; revoked or changed -> refuse with OpenSSH's warning; unknown ->
/// show the fingerprint and ask (accept once, accept and save, reject); without a terminal,
/// refuse (fail closed).
enum HostKeyTrust {
    static var userKnownHosts: String { homeDirectory + "/.ssh/known_hosts" }
    static let systemKnownHosts = "/etc/ssh/ssh_known_hosts"
    /// Keys Termhost itself vouches for (the sandbox's); read after OpenSSH's files.
    static var termhostKnownHosts: String {
        let env = ProcessInfo.processInfo.environment
        let data = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? homeDirectory + "/.local/share"
        return data + "/termhost/known_hosts"
    }

    static func verify(_ c: SSHConnection, interaction: Interaction) throws(SSHError) {
        var length = 0
        var type: Int32 = 0
        guard let raw = libssh2_session_hostkey(c.session, &length, &type), length > 0 else {
            throw SSHError("ssh: \(c.hostLabel) sent no host key")
        }
        let key = Array(UnsafeRawBufferPointer(start: raw, count: length))
        let keyType = KnownHosts.keyTypeName(in: key) ?? "unknown"
        let known = KnownHosts(files: [userKnownHosts, systemKnownHosts, termhostKnownHosts])
        for warning in known.warnings { interaction.host.log(.warning, warning) }
        let fingerprint = KnownHosts.fingerprint(key)
        let label = displayName(keyType)
        switch known.check(host: c.destination.address, port: c.destination.port, keyType: keyType, key: key) {
        case .known:
            return
        case .revoked(let file, let line):
            throw SSHError("""
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            @       WARNING: REVOKED HOST KEY DETECTED!               @
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            The \(label) host key for \(c.hostLabel) is marked as revoked in \(file):\(line).
            This could mean that a stolen key is being used to impersonate this host.
            \(label) key fingerprint is \(fingerprint).
            Host key verification failed.
            """, kind: .refused)
        case .changed(let file, let line):
            throw SSHError("""
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            @    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
            Someone could be eavesdropping on you right now (man-in-the-middle attack)!
            It is also possible that a host key has just been changed.
            The fingerprint for the \(label) key sent by the remote host is
            \(fingerprint).
            Please contact your system administrator.
            Add correct host key in \(file) to get rid of this message.
            Offending \(label) key in \(file):\(line)
            Host key for \(c.hostLabel) has changed and termhost refuses to connect: \
            it never offers to accept a changed key.
            Host key verification failed.
            """, kind: .refused)
        case .unknown(let otherTypes):
            var text = "The authenticity of host '\(c.hostLabel)' can't be established.\n\(label) key fingerprint is \(fingerprint)."
            if !otherTypes.isEmpty {
                text += "\nThis host key is known by other names or types: \(otherTypes.joined(separator: ", ")) is already known for it."
            }
            guard let interact = interaction.host.interact else { throw SSHError("Host key verification failed: the host offers no way to ask") }
            interact.notify(text, scene: interaction.scene)
            let choice: Int
            do {
                choice = try interact.choose("Trust this host key?", from: ["accept once", "accept and save to \(userKnownHosts)", "reject"],
                                             scene: interaction.scene)
            } catch {
                throw SSHError("\(text)\nHost key verification failed: \(error)", kind: .refused)
            }
            switch choice {
            case 0:
                return
            case 1:
                try save(host: c.destination.address, port: c.destination.port, keyType: keyType, key: key)
                interaction.notify("Warning: Permanently added '\(c.hostLabel)' (\(label)) to the list of known hosts.")
            default:
                throw SSHError("Host key verification failed: rejected by the user.", kind: .refused)
            }
        }
    }

    /// Appends a hashed entry to the user's known_hosts (creating ~/.ssh 0700 and the file 0600).
    static func save(host: String, port: Int, keyType: String, key: [UInt8]) throws(SSHError) {
        let dir = (userKnownHosts as NSString).deletingLastPathComponent
        mkdir(dir, 0o700)
        let fd = open(userKnownHosts, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SSHError("cannot add the host key to \(userKnownHosts): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let line = Array((KnownHosts.hashedLine(host: host, port: port, keyType: keyType, key: key) + "\n").utf8)
        guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count else {
            throw SSHError("cannot add the host key to \(userKnownHosts): \(String(cString: strerror(errno)))")
        }
    }

    /// "ssh-ed25519" -> "ED25519", as OpenSSH names key types in messages.
    static func displayName(_ keyType: String) -> String {
        switch keyType {
        case "ssh-ed25519": "ED25519"
        case "ssh-rsa": "RSA"
        case _ where keyType.hasPrefix("ecdsa-sha2-"): "ECDSA"
        default: keyType
        }
    }
}
