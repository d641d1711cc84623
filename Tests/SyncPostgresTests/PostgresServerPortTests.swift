import Foundation
import Testing
import TestSupport

/// The test server's TCP listener: PostgreSQL binds its port itself, so a port another program
/// holds makes it report the address in use, and the harness starts it on another candidate.
struct PostgresServerPortTests {
    @Test func aPortAnotherProgramHoldsIsSkipped() throws {
        let dir = TemporaryDirectory("termhost-pg-port")
        defer { dir.remove() }
        let certificates = dir.sub("certificates")
        let authority = try TestCertificates.authority("Termhost Test CA", file: "ca", in: certificates)
        let issued = try TestCertificates.server(["localhost"], signedBy: authority, file: "server", in: certificates)
        let held = LoopbackListener()
        defer { held.close() }
        let server = try PostgresServer(in: dir, tls: .init(certificate: issued.certificate, key: issued.key), firstPorts: [held.port])
        defer { server.stop() }
        #expect(server.tcpPort != nil && server.tcpPort != held.port)
        #expect(server.log.contains("could not bind IPv4 address \"127.0.0.1\": Address already in use"), "\(server.log)")
        #expect(try server.psql("SELECT 1") == "1\n")
    }
}
