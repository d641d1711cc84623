import Foundation

/// Writing to stdout/stderr, and JSON for `--json`.
enum Output {
    static func out(_ text: String = "") { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    static func err(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) { out(String(decoding: data, as: UTF8.self)) }
    }

    /// Bytes to a descriptor as they are (a session's output), retrying short writes.
    static func raw(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 { if errno == EINTR { continue } else { return } }
            done += n
        }
    }

    static func raw(_ fd: Int32, _ text: String) { Array(text.utf8).withUnsafeBytes { raw(fd, $0) } }

    static func ms(_ v: Double?) -> String { v.map { String(format: "%.2f ms", $0) } ?? "-" }

    /// Left-aligned columns.
    static func table(_ rows: [[String]], indent: String = "  ") {
        guard let width = rows.map(\.count).max() else { return }
        var widths = Array(repeating: 0, count: width)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        for r in rows {
            let line = r.enumerated().map { i, c in i == r.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
            out(indent + line)
        }
    }
}
