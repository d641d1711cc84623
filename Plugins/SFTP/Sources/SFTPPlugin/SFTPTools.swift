import CLibSSH2
import CTermhost
import Foundation
import TermhostSDK
import ToolArguments

/// The SFTP plugin's tools (services/tools.h): sftp_list, sftp_read, sftp_write, sftp_copy.
///
/// Design: every call connects to a saved host through the transport's open_saved (never a
/// prompt, never user@host), runs its requests inside one SFTPConnection and closes it.
/// Everything a server sends is data: names and file text go out JSON-escaped, listings and
/// reads are bounded and say how much was left out. Writes never leave a half-written target:
/// the bytes go to a temporary name in the target's directory, renamed onto the target at the
/// end (posix-rename when replacing, as uploads do), and the temporary is removed on failure.
enum SFTPTools {
    static let pathBytes = 4096
    static let listEntries = 1...1000
    static let defaultListEntries = 200
    /// Entries read to count what a listing leaves out; past this the count is a lower bound.
    static let countedEntries = 10_000
    static let readLines = 1...5000
    static let defaultReadLines = 200
    static let readOffsets = 0...100_000_000
    /// Bytes of text one sftp_read returns at most.
    static let readBytes = 256 * 1024
    /// Bytes of a file sftp_read scans to reach a window: windows past it are refused.
    static let scanBytes: UInt64 = 64 << 20
    /// The largest content sftp_write takes, and the largest file sftp_copy copies.
    static let writeBytes = 1 << 20
    static let copyBytes: UInt64 = 256 << 20
    static let chunk = 256 * 1024

    static let hostSchema = #"{"type":"string","maxLength":255,"description":"a saved host's ID, from list_hosts"}"#
    static let pathSchema = #"{"type":"string","maxLength":4096,"description":"a remote path; relative paths start in the login directory"}"#

    static let list = Tool(
        "sftp_list",
        description: "Lists a remote directory over SFTP: name, type, size, mode, mtime, uid and gid of each entry, sorted by name, at most max_entries with the number left out.",
        inputSchema: """
        {"type":"object","properties":{"host":\(hostSchema),"path":\(pathSchema),\
        "max_entries":{"type":"integer","minimum":\(listEntries.lowerBound),"maximum":\(listEntries.upperBound),"description":"entries returned at most (default \(defaultListEntries))"}},\
        "required":["host","path"],"additionalProperties":false}
        """,
        readOnly: true, parallelSafe: true)

    static let read = Tool(
        "sftp_read",
        description: "Reads a window of lines of a remote UTF-8 text file over SFTP: max_lines lines from line offset (0 is the first), at most 256 KiB. Returns next_offset for the following window (null at the end of the file) and total_lines when the end was reached. Binary files (a NUL byte or invalid UTF-8) are refused.",
        inputSchema: """
        {"type":"object","properties":{"host":\(hostSchema),"path":\(pathSchema),\
        "offset":{"type":"integer","minimum":\(readOffsets.lowerBound),"maximum":\(readOffsets.upperBound),"description":"the first line to return, counted from 0 (default 0)"},\
        "max_lines":{"type":"integer","minimum":\(readLines.lowerBound),"maximum":\(readLines.upperBound),"description":"lines returned at most (default \(defaultReadLines))"}},\
        "required":["host","path"],"additionalProperties":false}
        """,
        readOnly: true, parallelSafe: true)

    static let write = Tool(
        "sftp_write",
        description: "Writes text to a remote file over SFTP: written to a temporary name in the same directory, then renamed onto path, so the file is never seen half written. Refuses an existing file unless overwrite is true (then replaced atomically, keeping its mode).",
        inputSchema: """
        {"type":"object","properties":{"host":\(hostSchema),"path":\(pathSchema),\
        "content":{"type":"string","maxLength":\(writeBytes),"description":"the file's new content (UTF-8)"},\
        "overwrite":{"type":"boolean","description":"replace an existing file (default false)"}},\
        "required":["host","path","content"],"additionalProperties":false}
        """,
        readOnly: false, parallelSafe: false)

    static let copy = Tool(
        "sftp_copy",
        description: "Copies one remote regular file (up to 256 MiB) to another remote path, on the same saved host or another, streamed through termhost; the target is written under a temporary name and renamed, as sftp_write does. Refuses an existing target unless overwrite is true.",
        inputSchema: """
        {"type":"object","properties":{"host":\(hostSchema),"path":\(pathSchema),\
        "target_host":{"type":"string","maxLength":255,"description":"the saved host to copy to (default: host)"},\
        "target_path":\(pathSchema),\
        "overwrite":{"type":"boolean","description":"replace an existing target (default false)"}},\
        "required":["host","path","target_path"],"additionalProperties":false}
        """,
        readOnly: false, parallelSafe: false)

    static let all = [list, read, write, copy]

    static func path(_ arguments: ToolArguments, _ name: String) throws(PluginError) -> String {
        let p = try arguments.string(name)
        guard !p.isEmpty, p.utf8.count <= pathBytes, !p.utf8.contains(0) else {
            throw arguments.invalid("'\(name)' must be a path of 1 to \(pathBytes) bytes without NUL")
        }
        return p
    }

    static func failure(_ error: SFTPError) -> PluginError {
        let code: Int = switch error.kind {
        case .denied: TERMHOST_ERR_DENIED
        case .stopped, .paused: TERMHOST_ERR_CANCELLED
        case .refused, .failed: TERMHOST_ERR_INVALID_ARGUMENT
        default: TERMHOST_ERR_IO
        }
        return PluginError(error.message, code: Int32(code))
    }

    static func cancelled(_ tool: String) -> SFTPError { SFTPError(.stopped, "\(tool): cancelled") }

    /// Runs SFTP work, its failure as a tool error.
    static func mapped<T>(_ body: () throws(SFTPError) -> T) throws(PluginError) -> T {
        do throws(SFTPError) { return try body() } catch { throw failure(error) }
    }
}

extension SFTPFeature: ToolProviding {
    func callTool(_ call: ToolCallRequest) throws(PluginError) -> String {
        let arguments = try ToolArguments(call.argumentsJSON, tool: call.tool)
        guard SFTPTools.all.contains(where: { $0.name == call.tool }) else {
            throw PluginError("the SFTP plugin has no tool '\(VisibleText.of(call.tool))'", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        guard let transport = SSHTransport(host: host) else {
            throw PluginError("\(call.tool): the SSH transport service is unavailable (is the SSH feature enabled? see termhost features)",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        let hostName = try arguments.string("host")
        return try toolCalls.run(call.callID) { (cancel) throws(PluginError) -> String in
            // A listing is a few requests: it may ride on a connection the daemon holds.
            let connection = try SFTPConnection(transport: transport, savedHost: hostName, shared: call.tool == SFTPTools.list.name)
            defer { connection.close() }
            switch call.tool {
            case SFTPTools.list.name: return try SFTPTools.list(arguments, on: connection)
            case SFTPTools.read.name: return try SFTPTools.read(arguments, on: connection, cancel: cancel)
            case SFTPTools.write.name: return try SFTPTools.write(arguments, on: connection, callID: call.callID)
            default:
                let targetName = try arguments.optionalString("target_host") ?? hostName
                guard targetName != hostName else {
                    return try SFTPTools.copy(arguments, from: connection, to: connection, callID: call.callID, cancel: cancel)
                }
                let target = try SFTPConnection(transport: transport, savedHost: targetName)
                defer { target.close() }
                return try SFTPTools.copy(arguments, from: connection, to: target, callID: call.callID, cancel: cancel)
            }
        }
    }

    func cancelTool(callID: UInt64) { toolCalls.cancel(callID) }
}
