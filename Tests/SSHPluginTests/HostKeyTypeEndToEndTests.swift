import Foundation
import Testing
import TestSupport

/// Which host key the server shows: the type known_hosts already holds comes first, as with
/// OpenSSH's client; and a server whose host key libssh2 cannot check is reported as OpenSSH
/// reports it. Against real sshd servers with several host keys, or only an RSA one.
@Suite struct HostKeyTypeEndToEndTests {
    /// An sshd with an ed25519 host key (SSHServer's own) and an ECDSA one (libssh2's first
    /// choice by default).
    func harnessWithECDSAAndEd25519(_ dir: TemporaryDirectory) throws -> SSHHarness {
        let ecdsa = dir.sub("ecdsa-host") + "/key"
        let made = try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", ecdsa])
        guard made.status == 0 else { throw Shell.Failure(description: "ssh-keygen failed: \(made.output)") }
        return try SSHHarness(dir: dir, trustServer: false, serverConfig: "HostKey \(ecdsa)")
    }

    /// OpenSSH's own `ssh`, without a terminal, saving the host key as it does by default on
    /// Debian (hashed) into the harness's known_hosts.
    func connectWithOpenSSH(_ h: SSHHarness) throws -> Shell.Result {
        try Shell.run("/usr/bin/ssh", ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new",
                                       "-o", "HashKnownHosts=yes", "-o", "UserKnownHostsFile=\(h.home)/.ssh/known_hosts",
                                       "-o", "GlobalKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-i", h.key.privatePath,
                                       "-p", String(h.server.port), "\(NSUserName())@127.0.0.1", "true"],
                      environment: h.environment)
    }

    @Test func aHostWhoseEd25519KeyOpenSSHSavedConnectsWithoutAsking() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harnessWithECDSAAndEd25519(dir)
        defer { h.server.stop() }
        let ssh = try connectWithOpenSSH(h)
        #expect(ssh.status == 0, "\(ssh.output)")
        let saved = h.knownHosts.split(separator: "\n")
        #expect(saved.count == 1 && saved[0].hasPrefix("|1|") && saved[0].contains(" ssh-ed25519 "), "\(h.knownHosts)")
        // No terminal: an unknown key would fail the connection.
        let r = try h.termhost(["exec", h.target, "--", "echo", "known"])
        #expect(r.status == 0 && r.stdout == "known\n", "\(r.stderr)")
        #expect(!r.stderr.contains("authenticity"), "\(r.stderr)")
    }

    @Test func aHostKnownOnlyByItsECDSAKeyStillShowsThatKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harnessWithECDSAAndEd25519(dir)
        defer { h.server.stop() }
        let scan = try Shell.run("/usr/bin/ssh-keyscan", ["-t", "ecdsa", "-p", String(h.server.port), "127.0.0.1"])
        #expect(scan.stdout.contains(" ecdsa-sha2-nistp256 "), "\(scan.output)")
        _ = dir.write("home/.ssh/known_hosts", scan.stdout)
        let r = try h.termhost(["exec", h.target, "--", "echo", "known"])
        #expect(r.status == 0 && r.stdout == "known\n", "\(r.stderr)")
    }

    /// Nothing known: OpenSSH's order, so the key asked about is the ed25519 one, as `ssh` asks.
    @Test func anUnknownHostIsAskedAboutItsEd25519KeyAsOpenSSHAsks() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try harnessWithECDSAAndEd25519(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr.hasPrefix("The authenticity of host '[127.0.0.1]:\(h.server.port)' can't be established.\nED25519 key fingerprint is SHA256:"),
                "\(r.stderr)")
    }

    @Test func aServerWithOnlyAnRSAHostKeyIsReportedAsOpenSSHReportsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, trustServer: false)
        h.server.stop()
        let rsa = try SSHServer(in: dir, authorizedKeys: [h.key.publicLine], hostKeyType: "rsa",
                                extraConfig: "HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256")
        defer { rsa.stop() }
        _ = dir.write("home/.ssh/known_hosts", rsa.knownHostsLine + "\n")
        let r = try h.termhost(["exec", "\(NSUserName())@127.0.0.1:\(rsa.port)", "--", "echo", "connected"])
        let version = try LoadedLibSSH2.version(of: Paths.products + "/libSSHPlugin.so")
        if version.split(separator: ".").compactMap({ Int($0) }).lexicographicallyPrecedes([1, 11]) {
            #expect(r.status == 255)
            #expect(r.stderr == """
            Unable to negotiate with 127.0.0.1 port \(rsa.port): no matching host key type found. Their offer: rsa-sha2-512,rsa-sha2-256
            The server offers only an RSA host key signed with SHA-2 (rsa-sha2-512, rsa-sha2-256), which libssh2 \(version) \
            cannot verify (it checks RSA host keys only as ssh-rsa, SHA-1); termhost needs libssh2 1.11 or later for this server.

            """)
        } else {
            #expect(r.status == 0 && r.stdout == "connected\n", "\(r.stderr)")
        }
    }

    /// The same wording for the other lists; a key exchange no libssh2 version has.
    @Test func aServerWithNoKeyExchangeInCommonIsReportedAsOpenSSHReportsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: "KexAlgorithms sntrup761x25519-sha512@openssh.com")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "true"])
        #expect(r.status == 255)
        #expect(r.stderr == "Unable to negotiate with 127.0.0.1 port \(h.server.port): no matching key exchange method found. " +
                "Their offer: sntrup761x25519-sha512@openssh.com,kex-strict-s-v00@openssh.com\n", "\(r.stderr)")
    }
}
