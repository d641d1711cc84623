import Foundation
import Testing
import TestSupport

/// What libssh2 1.11 adds to the algorithm lists, against stock sshd servers that offer nothing
/// else: AES-GCM, and encrypt-then-MAC with a cipher that needs a MAC. On 1.10 the same servers
/// are refused with OpenSSH's wording and the server's offer. Which libssh2 applies is the one
/// the built SSH plugin loads (`LoadedLibSSH2`), so the same test runs on either build.
@Suite struct LibSSH2AlgorithmsEndToEndTests {
    static func has111() throws -> Bool {
        let version = try LoadedLibSSH2.version(of: Paths.products + "/libSSHPlugin.so")
        return !version.split(separator: ".").compactMap { Int($0) }.lexicographicallyPrecedes([1, 11])
    }

    func exec(serverConfig: String) throws -> (Shell.Result, port: Int) {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: serverConfig)
        defer { h.server.stop() }
        return (try h.termhost(["exec", h.target, "--", "echo", "connected"]), h.server.port)
    }

    @Test func aServerOfferingOnlyAESGCMIsReachedWithLibSSH2111() throws {
        let (r, port) = try exec(serverConfig: "Ciphers aes256-gcm@openssh.com")
        if try Self.has111() {
            #expect(r.status == 0 && r.stdout == "connected\n", "\(r.stderr)")
        } else {
            #expect(r.status == 255)
            #expect(r.stderr.hasPrefix("Unable to negotiate with 127.0.0.1 port \(port): no matching cipher found. Their offer: aes256-gcm@openssh.com"),
                    "\(r.stderr)")
        }
    }

    @Test func aServerOfferingOnlyEncryptThenMACIsReachedWithLibSSH2111() throws {
        let (r, port) = try exec(serverConfig: "Ciphers aes128-ctr\nMACs hmac-sha2-256-etm@openssh.com")
        if try Self.has111() {
            #expect(r.status == 0 && r.stdout == "connected\n", "\(r.stderr)")
        } else {
            #expect(r.status == 255)
            #expect(r.stderr.hasPrefix("Unable to negotiate with 127.0.0.1 port \(port): no matching MAC found. Their offer: hmac-sha2-256-etm@openssh.com"),
                    "\(r.stderr)")
        }
    }
}

/// Each HMAC carries bulk data both ways across key exchanges the server starts every 64 KiB
/// (RekeyLimit). Termhost's libssh2 keeps one keyed HMAC context per direction and replaces it
/// at each key exchange: a context kept past its key would end the connection with a MAC
/// error, one not re-armed between packets would too.
@Suite struct HMACRekeyEndToEndTests {
    /// 1 MiB of random bytes as base64 text (about 1.4 MB) through a remote `cat`, on a server
    /// that offers only aes128-ctr and `mac`.
    static func stream(mac: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: "LogLevel DEBUG1\nCiphers aes128-ctr\nMACs \(mac)\nRekeyLimit 64K")
        defer { h.server.stop() }
        var generator = SystemRandomNumberGenerator()
        let text = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let input = Data(text).base64EncodedString(options: .lineLength76Characters) + "\n"
        let r = try h.termhost(["exec", h.target, "--", "cat"], stdin: input, timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == input, "\(r.stdout.utf8.count) of \(input.utf8.count) bytes came back")
        let kexes = h.server.log.components(separatedBy: "SSH2_MSG_KEXINIT sent").count - 1
        #expect(kexes > 10, "the server exchanged keys \(kexes) times:\n\(h.server.log.suffix(2000))")
    }

    @Test(arguments: ["hmac-sha2-256", "hmac-sha2-512", "hmac-sha1", "hmac-sha1-96", "hmac-md5", "hmac-md5-96"])
    func encryptAndMAC(mac: String) throws { try Self.stream(mac: mac) }

    @Test(.enabled(if: try LibSSH2AlgorithmsEndToEndTests.has111(), "encrypt-then-MAC needs libssh2 1.11"),
          arguments: ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "hmac-sha1-etm@openssh.com"])
    func encryptThenMAC(mac: String) throws { try Self.stream(mac: mac) }
}
