import SyncCore
import SyncPostgres
import Testing

/// Settings as `termhost sync backend set postgres` takes them: checked where they enter.
@Suite struct PostgresSettingsTests {
    @Test func aTCPHostDefaultsToVerifiedTLSAndASocketToNone() throws {
        let tcp = try PostgresSettings(options: ["host": "db.example.com", "dbname": "termhost", "user": "alice", "vault": "team"])
        #expect(tcp.tls == .verifyFull)
        #expect(tcp.summary == "postgresql alice@db.example.com:5432/termhost vault 'team' (TLS verify-full)")
        let socket = try PostgresSettings(options: ["host": "/run/postgresql", "dbname": "termhost", "user": "alice", "vault": "team"])
        #expect(socket.summary == "postgresql alice@[/run/postgresql]:5432/termhost vault 'team' (Unix socket)")
    }

    @Test func numbersOutOfRangeAndUnknownKeysAreRefused() {
        let base = ["host": "db", "dbname": "termhost", "user": "alice", "vault": "team"]
        #expect(throws: SyncBackendError.invalid("bad port '70000': expected a number from 1 to 65535")) {
            _ = try PostgresSettings(options: base.merging(["port": "70000"]) { $1 })
        }
        #expect(throws: SyncBackendError.invalid("bad connect_timeout '0': expected a number from 1 to 300")) {
            _ = try PostgresSettings(options: base.merging(["connect_timeout": "0"]) { $1 })
        }
        #expect(throws: SyncBackendError.invalid("bad sslmode 'maybe': expected one of disable, allow, prefer, require, verify-ca, verify-full")) {
            _ = try PostgresSettings(options: base.merging(["sslmode": "maybe"]) { $1 })
        }
        #expect(throws: SyncBackendError.invalid("unknown PostgreSQL setting 'password' (known: connect_timeout, dbname, host, port, sslmode, sslrootcert, user, vault)")) {
            _ = try PostgresSettings(options: base.merging(["password": "hunter2"]) { $1 })
        }
        #expect(throws: SyncBackendError.invalid("the PostgreSQL backend needs vault=...")) {
            _ = try PostgresSettings(options: base.filter { $0.key != "vault" })
        }
        #expect(throws: SyncBackendError.invalid("dbname must not contain a NUL byte")) {
            _ = try PostgresSettings(options: base.merging(["dbname": "a\u{0}host=evil"]) { $1 })
        }
    }
}
