import Foundation
import TermhostSDK

/// `termhost assistant approvals [list|rm ID] [--json]` and `termhost assistant audit [--json]
/// [--run ID]`: the plugin's command table calls these with the words after the subcommand and
/// prints the result.
public enum PolicyCommands {
    public struct Output: Sendable, Equatable {
        public var stdout: String
        public var stderr: String
        /// 0 done, 1 failed (unknown ID, unreadable store), 2 usage.
        public var status: Int32

        public init(stdout: String, stderr: String, status: Int32) {
            self.stdout = stdout
            self.stderr = stderr
            self.status = status
        }
    }

    public static let approvalsUsage = "usage: termhost assistant approvals [list] [--json]\n       termhost assistant approvals rm ID"
    public static let auditUsage = "usage: termhost assistant audit [--json] [--run ID]"

    public static func approvals(_ words: [String], storage: any PolicyStorage) -> Output {
        let approvals = RememberedApprovals(storage: storage)
        let json = words.contains("--json")
        let rest = words.filter { $0 != "--json" }
        do {
            switch rest {
            case [], ["list"]:
                let all = try approvals.list()
                if json {
                    let items = all.map { a in
                        "{\"id\":\(JSONText.quoted(a.id)),\"tool\":\(JSONText.quoted(a.tool)),\"family\":\(JSONText.quoted(a.family)),"
                            + "\"host\":\(JSONText.quoted(a.host)),\"created\":\(a.created)}"
                    }
                    return Output(stdout: "[" + items.joined(separator: ",") + "]\n", stderr: "", status: 0)
                }
                guard !all.isEmpty else { return Output(stdout: "no remembered approvals\n", stderr: "", status: 0) }
                var rows = [["ID", "TOOL", "HOST", "COMMAND FAMILY", "SINCE"]]
                rows += all.map { [$0.id, VisibleText.of($0.tool), $0.host.isEmpty ? "-" : VisibleText.of($0.host),
                                   VisibleText.of($0.family), stamp($0.created)] }
                return Output(stdout: table(rows), stderr: "", status: 0)
            case let words where words.count == 2 && words[0] == "rm":
                let id = words[1]
                let known = try approvals.list().first { $0.id == id }
                guard let known, try approvals.remove(id: id) else {
                    return Output(stdout: "", stderr: "termhost assistant approvals: no approval with ID '\(VisibleText.of(id))'\n", status: 1)
                }
                return Output(stdout: "removed \(id): \(VisibleText.of(known.tool)) '\(VisibleText.of(known.family))' on "
                              + "\(known.host.isEmpty ? "any host" : VisibleText.of(known.host))\n", stderr: "", status: 0)
            default:
                return Output(stdout: "", stderr: approvalsUsage + "\n", status: 2)
            }
        } catch {
            return Output(stdout: "", stderr: "termhost assistant approvals: cannot read the store: \(error)\n", status: 1)
        }
    }

    public static func audit(_ words: [String], storage: any PolicyStorage) -> Output {
        var json = false
        var run: String?
        var i = 0
        while i < words.count {
            switch words[i] {
            case "--json": json = true
            case "--run" where i + 1 < words.count: run = words[i + 1]; i += 1
            default: return Output(stdout: "", stderr: auditUsage + "\n", status: 2)
            }
            i += 1
        }
        do {
            let records = try AuditLog(storage: storage).records().filter { run == nil || $0.run == run }
            if json { return Output(stdout: "[" + records.map(\.json).joined(separator: ",") + "]\n", stderr: "", status: 0) }
            if records.isEmpty { return Output(stdout: "no decisions recorded\n", stderr: "", status: 0) }
            return Output(stdout: records.map(\.line).joined(separator: "\n") + "\n", stderr: "", status: 0)
        } catch {
            return Output(stdout: "", stderr: "termhost assistant audit: cannot read the store: \(error)\n", status: 1)
        }
    }

    static func stamp(_ seconds: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
