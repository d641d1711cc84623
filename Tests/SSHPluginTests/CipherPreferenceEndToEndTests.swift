import Foundation
import Testing
import TestSupport

/// Against a stock sshd offering OpenSSH's default ciphers: on libssh2 1.11, with AES and
/// carry-less multiply instructions, both directions use aes128-gcm@openssh.com (libssh2's own
/// order would pick chacha20-poly1305, as OpenSSH's does); without them, libssh2's order
/// stays. libssh2 1.10 has no AES-GCM and keeps its order. The cipher is the one sshd logs.
@Suite struct CipherPreferenceEndToEndTests {
    static func has111() throws -> Bool {
        let version = try LoadedLibSSH2.version(of: Paths.products + "/libSSHPlugin.so")
        return !version.split(separator: ".").compactMap { Int($0) }.lexicographicallyPrecedes([1, 11])
    }

    static var cpuHasAESGCM: Bool {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") || $0.hasPrefix("Features") }) else { return false }
        let flags = Set(line.split(separator: " "))
        return flags.contains("aes") && (flags.contains("pclmulqdq") || flags.contains("pmull"))
    }

    @Test func aStockServerGetsAES128GCMInBothDirectionsOnLibSSH2111() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir, serverConfig: "LogLevel DEBUG1")
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo", "connected"])
        #expect(r.status == 0 && r.stdout == "connected\n", "\(r.stderr)")
        let log = h.server.log
        let toServer = log.contains("kex: client->server cipher: aes128-gcm@openssh.com")
        let toClient = log.contains("kex: server->client cipher: aes128-gcm@openssh.com")
        if try Self.has111() && Self.cpuHasAESGCM {
            #expect(toServer && toClient, "\(log)")
        } else if try Self.has111() {
            #expect(log.contains("kex: client->server cipher: chacha20-poly1305@openssh.com"), "\(log)")
        } else {
            #expect(!toServer && !toClient, "\(log)")
        }
    }
}
