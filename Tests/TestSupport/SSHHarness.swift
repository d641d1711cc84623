import Foundation

/// The harness on a real OpenSSH sshd (ServerHarness), with its config.
public typealias SSHHarness = ServerHarness<SSHServer>

extension SSHServer: LoopbackSSHServer {}

extension ServerHarness where Server == SSHServer {
    public init(dir: TemporaryDirectory, keyType: String = "ed25519", passphrase: String = "", trustServer: Bool = true,
                authorize: Bool = true, serverConfig: String = "", sshdProgram: String = "/usr/sbin/sshd",
                hostKeyType: String = "ed25519", certifyHostKey: ((_ hostKey: String) throws -> Void)? = nil) throws {
        try self.init(dir: dir, keyType: keyType, passphrase: passphrase, trustServer: trustServer, authorize: authorize) { keys in
            try SSHServer(in: dir, authorizedKeys: keys, hostKeyType: hostKeyType, extraConfig: serverConfig, program: sshdProgram,
                          certifyHostKey: certifyHostKey)
        }
    }
}
