import Foundation

/// The harness on a real OpenSSH sshd (ServerHarness), with its config.
public typealias SSHHarness = ServerHarness<SSHServer>

extension SSHServer: LoopbackSSHServer {}

extension ServerHarness where Server == SSHServer {
    public init(dir: TemporaryDirectory, keyType: String = "ed25519", passphrase: String = "", trustServer: Bool = true,
                authorize: Bool = true, serverConfig: String = "", sshdProgram: String = "/usr/sbin/sshd") throws {
        try self.init(dir: dir, keyType: keyType, passphrase: passphrase, trustServer: trustServer, authorize: authorize) { keys in
            try SSHServer(in: dir, authorizedKeys: keys, extraConfig: serverConfig, program: sshdProgram)
        }
    }
}
