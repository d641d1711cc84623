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
