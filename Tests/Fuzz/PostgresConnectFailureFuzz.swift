// fuzz-sources: Plugins/Sync/Sources/SyncPostgres/PostgresConnectFailure.swift Plugins/Sync/Sources/SyncPostgres/PostgresSettings.swift Plugins/Sync/Sources/SyncCore/SyncBackend.swift
// What libpq says after a failed connect, partly the server's text (the FATAL line), on any
// bytes: the explanation is deterministic, never empty, grows the text by a bounded amount
// (it quotes, never repeats), and a certificate that does not verify is never retryable (a
// retry would not help, and the user must change sslrootcert); nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for settings in [PostgresSettings(host: "db.example.com", database: "termhost", user: "alice", vault: "team", tlsRootCertificate: "/etc/ca.pem"),
                     PostgresSettings(host: "db.example.com", database: "termhost", user: "alice", vault: "team")] {
        let explained = PostgresConnectFailure.explain(text, settings: settings)
        precondition(explained == PostgresConnectFailure.explain(text, settings: settings), "not deterministic")
        precondition(explained.message.utf8.count <= text.utf8.count + 400, "the explanation repeats the text")
        if text.contains("certificate verify failed") { precondition(!explained.isRetryable, "a CA mismatch is retried") }
    }
    return 0
}
