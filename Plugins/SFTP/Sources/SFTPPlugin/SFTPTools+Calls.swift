import CLibSSH2
import CTermhost
import TermhostSDK
import ToolArguments

/// The work of each SFTP tool, on an open SFTPConnection (SFTPTools.swift has the design).
extension SFTPTools {
    static func list(_ arguments: ToolArguments, on connection: SFTPConnection) throws(PluginError) -> String {
        let path = try path(arguments, "path")
        let limit = try arguments.integer("max_entries", in: listEntries, default: defaultListEntries)
        // list(upTo:) reads one entry past its limit: more than countedEntries says "at least".
        let entries = try mapped { () throws(SFTPError) in
            try connection.run { (fs, _) throws(SFTPError) in try fs.list(path, upTo: countedEntries) }
        }
        let shown = entries.prefix(limit)
        let omitted = entries.count - shown.count
        let lowerBound = entries.count > countedEntries
        let note = omitted == 0 ? "null" : JSONText.quoted("\(lowerBound ? "at least " : "")\(omitted) more entries not shown")
        return "{\"host\":\(JSONText.quoted(connection.destination)),\"path\":\(JSONText.quoted(path)),"
            + "\"entries\":[\(shown.map(\.json).joined(separator: ","))],"
            + "\"omitted\":\(omitted),\"omitted_is_lower_bound\":\(lowerBound),\"note\":\(note)}"
    }

    static func read(_ arguments: ToolArguments, on connection: SFTPConnection, cancel: ExecCancel) throws(PluginError) -> String {
        let path = try path(arguments, "path")
        let offset = try arguments.integer("offset", in: readOffsets, default: 0)
        let maxLines = try arguments.integer("max_lines", in: readLines, default: defaultReadLines)
        var window = LineWindow(offset: offset, maxLines: maxLines, maxBytes: readBytes)
        var binary: LineWindow.Binary?
        var ended = false
        try mapped { () throws(SFTPError) in
            try connection.run { (fs, _) throws(SFTPError) in
                let handle = try fs.open(path, flags: LIBSSH2_FXF_READ, what: "cannot open")
                defer { libssh2_sftp_close_handle(handle) }
                if try fs.fstat(handle, path: path).isDirectory {
                    throw SFTPError(.failed, "sftp_read: \(fs.host):\(path.shown) is a directory; sftp_list lists it")
                }
                var buffer = [UInt8](repeating: 0, count: chunk)
                var scanned: UInt64 = 0
                while !window.isFull && !ended {
                    if cancel.isCancelled { throw cancelled("sftp_read") }
                    if scanned >= scanBytes {
                        throw SFTPError(.failed, "sftp_read: line \(offset) of \(fs.host):\(path.shown) is not within its first \(scanBytes >> 20) MiB, the most sftp_read scans")
                    }
                    let n = buffer.withUnsafeMutableBytes {
                        libssh2_sftp_read(handle, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count)
                    }
                    guard n >= 0 else { throw fs.error(path, "cannot read") }
                    scanned += UInt64(n)
                    do throws(LineWindow.Binary) {
                        if n == 0 {
                            try window.finish()
                            ended = true
                        } else {
                            try window.feed(Array(buffer[..<n]))
                        }
                    } catch {
                        binary = error
                        return
                    }
                }
            }
        }
        if let binary {
            throw PluginError("sftp_read: \(connection.destination):\(path.shown) looks binary: \(binary.reason) (byte \(binary.at)); sftp_read reads UTF-8 text only",
                              code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        var notes: [String] = []
        if window.cutLine { notes.append("line \(offset) is longer than \(readBytes) bytes and was cut") }
        if ended && offset >= window.linesSeen && window.linesSeen > 0 { notes.append("the file has \(window.linesSeen) lines") }
        return "{\"host\":\(JSONText.quoted(connection.destination)),\"path\":\(JSONText.quoted(path)),\"offset\":\(offset),"
            + "\"lines\":[\(window.lines.map(JSONText.quoted).joined(separator: ","))],"
            + "\"next_offset\":\(window.nextOffset.map(String.init) ?? "null"),"
            + "\"total_lines\":\(ended ? String(window.linesSeen) : "null"),"
            + "\"note\":\(notes.isEmpty ? "null" : JSONText.quoted(notes.joined(separator: "; ")))}"
    }

    static func write(_ arguments: ToolArguments, on connection: SFTPConnection, callID: UInt64) throws(PluginError) -> String {
        let path = try path(arguments, "path")
        let content = Array(try arguments.string("content").utf8)
        let overwrite = try arguments.bool("overwrite", default: false)
        guard content.count <= writeBytes else { throw arguments.invalid("'content' is more than \(writeBytes) bytes") }
        let replaced = try mapped { () throws(SFTPError) -> Bool in
            try connection.run { (fs, extensions) throws(SFTPError) -> Bool in
                let existing = try target(fs, extensions, path, overwrite: overwrite, tool: "sftp_write")
                let temporary = temporaryName(path, callID)
                let handle = try fs.open(temporary, flags: LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL,
                                         mode: existing?.mode ?? 0o644, what: "cannot create")
                try finish(fs, extensions, handle: handle, temporary: temporary, path: path, replace: existing != nil) { () throws(SFTPError) in
                    try writeAll(fs, handle, content[...], temporary)
                }
                return existing != nil
            }
        }
        return "{\"host\":\(JSONText.quoted(connection.destination)),\"path\":\(JSONText.quoted(path)),"
            + "\"bytes_written\":\(content.count),\"replaced\":\(replaced)}"
    }

    static func copy(_ arguments: ToolArguments, from source: SFTPConnection, to target: SFTPConnection,
                     callID: UInt64, cancel: ExecCancel) throws(PluginError) -> String {
        let path = try path(arguments, "path")
        let targetPath = try self.path(arguments, "target_path")
        let overwrite = try arguments.bool("overwrite", default: false)
        func body(_ from: RemoteFS, _ to: RemoteFS, _ extensions: OpenSSHExtensions) throws(SFTPError) -> (UInt64, Bool) {
            try copyFile(from: from, path, to: to, extensions, targetPath, overwrite: overwrite, callID: callID, cancel: cancel)
        }
        // One connection's executor runs both ends when they are the same connection;
        // otherwise the source's turns nest inside the target's (two executors, no cycle).
        let (bytes, replaced) = try mapped { () throws(SFTPError) -> (UInt64, Bool) in
            if source === target {
                return try target.run { (fs, extensions) throws(SFTPError) in try body(fs, fs, extensions) }
            }
            return try target.run { (to, extensions) throws(SFTPError) in
                try source.run { (from, _) throws(SFTPError) in try body(from, to, extensions) }
            }
        }
        return "{\"host\":\(JSONText.quoted(source.destination)),\"path\":\(JSONText.quoted(path)),"
            + "\"target_host\":\(JSONText.quoted(target.destination)),\"target_path\":\(JSONText.quoted(targetPath)),"
            + "\"bytes_copied\":\(bytes),\"replaced\":\(replaced)}"
    }

    private static func copyFile(from: RemoteFS, _ path: String, to: RemoteFS, _ extensions: OpenSSHExtensions, _ targetPath: String,
                                 overwrite: Bool, callID: UInt64, cancel: ExecCancel) throws(SFTPError) -> (UInt64, Bool) {
        let input = try from.open(path, flags: LIBSSH2_FXF_READ, what: "cannot open")
        defer { libssh2_sftp_close_handle(input) }
        let entry = try from.fstat(input, path: path)
        guard entry.isRegular else { throw SFTPError(.refused, "sftp_copy: \(from.host):\(path.shown) is not a regular file") }
        if let size = entry.size, size > copyBytes {
            throw SFTPError(.refused, "sftp_copy: \(from.host):\(path.shown) is \(size) bytes; sftp_copy copies at most \(copyBytes >> 20) MiB")
        }
        let existing = try target(to, extensions, targetPath, overwrite: overwrite, tool: "sftp_copy")
        let temporary = temporaryName(targetPath, callID)
        let output = try to.open(temporary, flags: LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL,
                                 mode: existing?.mode ?? entry.mode, what: "cannot create")
        var copied: UInt64 = 0
        try finish(to, extensions, handle: output, temporary: temporary, path: targetPath, replace: existing != nil) { () throws(SFTPError) in
            var buffer = [UInt8](repeating: 0, count: chunk)
            while true {
                if cancel.isCancelled { throw cancelled("sftp_copy") }
                let n = buffer.withUnsafeMutableBytes { libssh2_sftp_read(input, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
                if n == 0 { return }
                guard n > 0 else { throw from.error(path, "cannot read") }
                copied += UInt64(n)
                if copied > copyBytes {
                    throw SFTPError(.refused, "sftp_copy: \(from.host):\(path.shown) grew past \(copyBytes >> 20) MiB while being copied")
                }
                try writeAll(to, output, buffer[..<n], temporary)
            }
        }
        return (copied, existing != nil)
    }

    /// The target's current entry (nil when there is none), after checking it may be written:
    /// an existing one only with overwrite, only a regular file, and only where the server can
    /// replace it atomically.
    private static func target(_ fs: RemoteFS, _ extensions: OpenSSHExtensions, _ path: String,
                               overwrite: Bool, tool: String) throws(SFTPError) -> RemoteEntry? {
        guard let existing = try fs.statIfExists(path) else { return nil }
        guard overwrite else {
            throw SFTPError(.refused, "\(tool): \(fs.host):\(path.shown) exists; pass overwrite true to replace it")
        }
        guard existing.isRegular else { throw SFTPError(.refused, "\(tool): \(fs.host):\(path.shown) exists and is not a regular file") }
        guard try extensions.supportsPosixRename(fs) else {
            throw SFTPError(.refused, "\(tool): cannot replace \(fs.host):\(path.shown) atomically: the server does not offer posix-rename@openssh.com")
        }
        return existing
    }

    /// ".NAME.termhost-tool-CALL" beside the target: never the name a paused upload resumes.
    static func temporaryName(_ path: String, _ callID: UInt64) -> String {
        path.parentPath.appendingPath(".\(path.lastComponent).termhost-tool-\(callID)")
    }

    /// Runs `fill` on the temporary file, closes it and renames it onto `path`; on any failure
    /// the temporary file is removed and the target is untouched.
    private static func finish(_ fs: RemoteFS, _ extensions: OpenSSHExtensions, handle: OpaquePointer, temporary: String, path: String,
                               replace: Bool, _ fill: () throws(SFTPError) -> Void) throws(SFTPError) {
        var open = true
        do throws(SFTPError) {
            try fill()
            open = false
            guard libssh2_sftp_close_handle(handle) == 0 else { throw fs.error(temporary, "cannot close") }
            if replace { try extensions.posixRename(fs, from: temporary, to: path) } else { try fs.rename(temporary, path) }
        } catch {
            if open { libssh2_sftp_close_handle(handle) }
            try? fs.remove(temporary)
            throw error
        }
    }

    private static func writeAll(_ fs: RemoteFS, _ handle: OpaquePointer, _ bytes: ArraySlice<UInt8>, _ path: String) throws(SFTPError) {
        var done = 0
        var stall = WriteStall()
        while done < bytes.count {
            let n = bytes[(bytes.startIndex + done)...].withUnsafeBytes {
                libssh2_sftp_write(handle, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count)
            }
            if n == 0 {
                try stall.wait(fs, path, what: "cannot write")
                continue
            }
            guard n > 0 else { throw fs.error(path, "cannot write") }
            stall.progressed()
            done += n
        }
    }
}
