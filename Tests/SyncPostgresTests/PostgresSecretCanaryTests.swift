import Foundation
import Testing
import TestSupport

/// The canary: secrets planted on a device (an SSH identity's stored private key and password)
/// and the PostgreSQL passwords themselves are in no byte of the database after two devices
/// synced, and the PostgreSQL password is in no output, status, store or log of `termhost`.
extension PostgresSyncEndToEndTests {
    @Test func noSecretReachesTheDatabaseOrAnyOutput() throws {
        // Device A is set up on a terminal: the password is asked for with echo off.
        let a = TermhostDevice(plugins: team.plugins)
        let setA = try TmuxSession(command: [Paths.termhost, "sync", "backend", "set", "postgres"] + settings("alice"), environment: a.env, width: 400)
        defer { setA.close() }
        setA.waitFor("Password for PostgreSQL role 'alice' (empty for none):")
        setA.type(PostgresTeam.members["alice"]!)
        let screen = setA.waitFor("[exit")
        #expect(screen.contains("password: stored; the next sync reconciles"), "\(screen)")
        #expect(!screen.contains(PostgresTeam.members["alice"]!))
        let b = try device("bob")

        let keyCanary = "KEY-CANARY-\(UUID().uuidString)", passwordCanary = "PW-CANARY-\(UUID().uuidString)"
        let keyFile = a.dir.write("id_test", "-----BEGIN OPENSSH PRIVATE KEY-----\n\(keyCanary)\n-----END OPENSSH PRIVATE KEY-----\n")
        let identity = try TmuxSession(command: [Paths.termhost, "identities", "add", "deploy", "--user", "deploy", "--store-key", keyFile, "--password"],
                                       environment: a.env)
        defer { identity.close() }
        identity.waitFor("Password for identity 'deploy':")
        identity.type(passwordCanary)
        #expect(identity.waitFor("[exit").contains("(key and password kept in the secrets store)"))
        let planted = secretsText(a)
        for canary in [keyCanary, passwordCanary] {
            #expect(planted.matches(of: /"([A-Za-z0-9+\/=]{16,})"/).contains { Data(base64Encoded: String($0.1)).map { String(decoding: $0, as: UTF8.self).contains(canary) } ?? false })
        }

        var outputs: [Shell.Result] = []
        outputs.append(try a.run("hosts", "add", "web", "web.example.com", "--use-identity", "deploy"))
        outputs.append(try a.run("sync", "now"))
        outputs.append(try b.run("sync", "now"))
        outputs.append(try b.run("hosts", "add", "db", "db.example.com"))
        outputs.append(try b.run("sync", "now"))
        outputs.append(try a.run("sync", "now"))
        #expect(outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.output))")
        #expect(try b.run("identities", "show", "deploy").stdout.contains("deploy"))
        for d in [a, b] {
            for args in [["sync", "status"], ["sync", "status", "--json"], ["sync", "backend", "show"], ["sync", "backend", "show", "--json"],
                         ["sync", "conflicts", "--json"]] {
                outputs.append(try Shell.run(Paths.termhost, args, environment: d.env))
            }
        }

        let dump = try Shell.run(PostgresServer.bin + "/pg_dump", ["--data-only", "-h", socket, "-U", PostgresServer.adminUser, PostgresTeam.database],
                                 environment: ["PGPASSWORD": PostgresServer.adminPassword, "PATH": "/usr/bin:/bin"])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout.contains(hex("web.example.com")), "the bodies are in the dump, as bytea hex")
        let pgPasswords = [PostgresTeam.members["alice"]!, PostgresTeam.members["bob"]!]
        for secret in [keyCanary, passwordCanary] + pgPasswords {
            for form in [secret, Data(secret.utf8).base64EncodedString(), hex(secret)] {
                #expect(!dump.stdout.contains(form), "a secret is in the database")
            }
        }
        for secret in pgPasswords {
            for form in [secret, Data(secret.utf8).base64EncodedString()] {
                #expect(!outputs.contains { $0.output.contains(form) }, "a PostgreSQL password is in termhost's output")
                #expect(!filesText(a).contains(form) && !filesText(b).contains(form), "a PostgreSQL password is outside the secrets file")
            }
        }
    }

    /// Every file of a device (store, its journal, logs, caches) but the secrets file.
    func filesText(_ d: TermhostDevice) -> String {
        var all = ""
        let e = FileManager.default.enumerator(atPath: d.dir.path)
        while let name = e?.nextObject() as? String {
            guard !name.hasSuffix("secrets.json"), let data = FileManager.default.contents(atPath: d.dir.path + "/" + name) else { continue }
            all += String(decoding: data, as: UTF8.self)
        }
        return all
    }

    func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }
}
