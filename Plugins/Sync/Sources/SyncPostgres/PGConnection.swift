import CLibPQ
import Glibc

/// Why a libpq call failed: the server's (or libpq's) text, the SQLSTATE when the server sent
/// one, and whether the connection is gone (server restarted, network down), which makes the
/// failure retryable.
struct PGError: Error, Equatable {
    let message: String
    let sqlState: String?
    let connectionLost: Bool
}

/// Rows of one result, every value in PostgreSQL's text format (nil for SQL NULL).
struct PGRows {
    let rows: [[String?]]
    var count: Int { rows.count }
    subscript(row: Int, column: Int) -> String? { rows[row][column] }
}

/// One libpq connection (`PGconn *`). `deinit` calls `PQfinish`.
///
/// Every statement goes through `query`, which is `PQexecParams`: values travel as parameters,
/// never spliced into SQL text. The connection is opened with `PQconnectdbParams` and
/// `expand_dbname = 0`, so no value (a database name holding "host=...") is parsed as a conninfo
/// string, and the password is one keyword among the others, never part of a string that
/// could be logged. Not thread-safe: libpq allows one caller per connection; the backend that
/// owns it is used from one thread at a time.
final class PGConnection {
    private let raw: OpaquePointer

    /// Connects with libpq keywords (`host`, `port`, `dbname`, `user`, `password`, `sslmode`...).
    init(parameters: [(String, String)]) throws(PGError) {
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection: OpaquePointer? = keywords.withUnsafeBufferPointer { k in
            values.withUnsafeBufferPointer { v in
                k.withMemoryRebound(to: UnsafePointer<CChar>?.self) { k in
                    v.withMemoryRebound(to: UnsafePointer<CChar>?.self) { v in
                        PQconnectdbParams(k.baseAddress, v.baseAddress, 0)
                    }
                }
            }
        }
        guard let connection else { throw PGError(message: "out of memory", sqlState: nil, connectionLost: true) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PGConnection.trim(PQerrorMessage(connection))
            PQfinish(connection)
            throw PGError(message: message, sqlState: nil, connectionLost: true)
        }
        raw = connection
        // libpq prints server NOTICEs to stderr by default; they are server text and not ours
        // to show (CREATE ... IF NOT EXISTS says "already exists, skipping").
        PQsetNoticeProcessor(raw, { _, _ in }, nil)
    }

    deinit { PQfinish(raw) }

    /// Whether the connection is still usable as far as libpq knows.
    var isOpen: Bool { PQstatus(raw) == CONNECTION_OK }

    /// The socket, for `poll` while waiting for notifications.
    var socket: Int32 { PQsocket(raw) }

    /// Runs one statement with text parameters ($1, $2...; nil is NULL) and returns its rows.
    /// The corresponding C function is `PQexecParams` (text format in and out).
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(PGError) -> PGRows {
        let values = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { values.forEach { free($0) } }
        let result: OpaquePointer? = values.withUnsafeBufferPointer { v in
            v.withMemoryRebound(to: UnsafePointer<CChar>?.self) { v in
                PQexecParams(raw, sql, Int32(values.count), nil, v.baseAddress, nil, nil, 0)
            }
        }
        guard let result else { throw failure(nil) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK:
            return PGRows(rows: [])
        case PGRES_TUPLES_OK:
            let rowCount = Int(PQntuples(result)), columnCount = Int(PQnfields(result))
            var rows: [[String?]] = []
            rows.reserveCapacity(rowCount)
            for r in 0..<Int32(rowCount) {
                rows.append((0..<Int32(columnCount)).map { c in
                    PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c))
                })
            }
            return PGRows(rows: rows)
        default:
            throw failure(result)
        }
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws.
    func transaction<R>(_ body: () throws(PGError) -> R) throws(PGError) -> R {
        try query("BEGIN")
        do {
            let value = try body()
            try query("COMMIT")
            return value
        } catch {
            if isOpen { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    /// Reads what the server sent without blocking and returns the notifications received so
    /// far (channel, payload). False in `ok` when the connection broke.
    /// The corresponding C functions are `PQconsumeInput` and `PQnotifies`.
    func notifications() -> (ok: Bool, notes: [(channel: String, payload: String)]) {
        let ok = PQconsumeInput(raw) == 1
        var notes: [(String, String)] = []
        while let note = PQnotifies(raw) {
            notes.append((String(cString: note.pointee.relname), String(cString: note.pointee.extra)))
            PQfreemem(note)
        }
        return (ok && isOpen, notes)
    }

    private func failure(_ result: OpaquePointer?) -> PGError {
        let state = result.flatMap { PQresultErrorField($0, PGConnection.sqlStateField) }.map { String(cString: $0) }
        let primary = result.flatMap { PQresultErrorField($0, PGConnection.primaryMessageField) }.map { String(cString: $0) }
        let message = primary.map(PGConnection.oneLine) ?? PGConnection.trim(PQerrorMessage(raw))
        // Class 08 is "connection exception"; 57P01-57P03: the server is shutting down or starting.
        let lost = !isOpen || (state.map { $0.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains($0) } ?? false)
        return PGError(message: message, sqlState: state, connectionLost: lost)
    }

    // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY (postgres_ext.h), character-literal macros.
    private static let sqlStateField = Int32(UInt8(ascii: "C"))
    private static let primaryMessageField = Int32(UInt8(ascii: "M"))

    /// libpq's and the server's text on one line: their messages run over several ("...
    /// failed: No such file or directory\n\tIs the server running...?"), which a status line
    /// printed as escapes (`\012\011`). Lines are trimmed and joined with "; ".
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }

    private static func trim(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        return oneLine(String(cString: text))
    }
}
