import Foundation
import Glibc
import TermhostSDK

/// `termhost sftp HOST`: an interactive shell in the manner of OpenSSH's sftp. Browsing uses
/// one connection; get and put go through the transfer queue on their own connections.
struct SFTPShell {
    let invocation: CommandInvocation
    let host: PluginHost
    let transport: SSHTransport
    let destination: String

    static let help = """
    Available commands:
    ls [-l] [path]                 list a remote directory
    cd [path]                      change the remote directory
    lcd [path]                     change the local directory
    pwd, lpwd                      print the remote, local directory
    get [-r] [--resume] [--overwrite|--skip|--keep-both] remote [local]
    put [-r] [--resume] [--overwrite|--skip|--keep-both] local [remote]
    mkdir path, rmdir path, rm path
    rename old new                 (fails if new exists)
    chmod mode path                mode in octal
    stat path                      attributes of a path
    df [path]                      disk space of the file system holding path
    help, ?                        this text
    exit, quit, bye                leave
    Names with spaces: quote them ("my file") or escape them (my\\ file).
    A script on stdin stops at the first failing command unless the line starts with "-".
    """

    func run() -> Int32 {
        let connection: SFTPConnection
        var cwd: String
        do {
            connection = try SFTPConnection(transport: transport, destination: destination, scene: invocation.scene)
            cwd = try connection.run { fs, _ throws(SFTPError) in try fs.realpath(".") }
        } catch {
            invocation.printError(error.message)
            return error.exitStatus
        }
        defer { connection.close() }
        invocation.print("Connected to \(destination.shown).")
        var lcwd = host.workingDirectory(scene: invocation.scene)
        let editor = LineEditor(input: invocation.stdinFD, output: invocation.stdoutFD)
        // A script (stdin not a terminal) stops at the first failing command, as sftp -b does,
        // unless the command starts with "-".
        let script = isatty(invocation.stdinFD) != 1
        while let line = editor.read(prompt: "sftp> ") {
            var text = Substring(line)
            let tolerant = text.first == "-"
            if tolerant { text = text.dropFirst() }
            let words: [String]
            do throws(SFTPError) { words = try SFTPShell.split(String(text)) } catch {
                invocation.printError(error.message)
                if script && !tolerant { return 1 }
                continue
            }
            guard let command = words.first else { continue }
            let args = Array(words.dropFirst())
            if ["exit", "quit", "bye"].contains(command) { break }
            do throws(SFTPError) {
                try execute(command, args, connection: connection, cwd: &cwd, lcwd: &lcwd)
            } catch {
                invocation.printError(error.message)
                if error.kind == .connectionLost { return 255 }
                if script && !tolerant { return 1 }
            }
        }
        return 0
    }

    private func remote(_ path: String?, _ cwd: String) -> String {
        guard let path, !path.isEmpty else { return cwd }
        return path.utf8.first == 0x2f ? path : cwd.appendingPath(path)
    }

    private func execute(_ command: String, _ args: [String], connection: SFTPConnection, cwd: inout String, lcwd: inout String) throws(SFTPError) {
        let here = cwd
        switch command {
        case "help", "?": invocation.print(SFTPShell.help)
        case "pwd": invocation.print("Remote working directory: \(cwd.shown)")
        case "lpwd": invocation.print("Local working directory: \(lcwd.shown)")
        case "cd":
            let target = args.first ?? "."
            let resolved = try connection.run { fs, _ throws(SFTPError) -> String in
                let path = try fs.realpath(args.isEmpty ? "." : remote(target, here))
                guard try fs.stat(path).isDirectory else { throw SFTPError(.failed, "sftp: \(destination):\(path.shown): Not a directory") }
                return path
            }
            cwd = resolved
        case "lcd":
            let target = absoluteLocal(args.first ?? NSHomeDirectory(), in: lcwd)
            guard let st = LocalFile.stat(target), FileType.of(st) == FileType.directory else { throw SFTPError.local(target, "cannot change to", errno: ENOTDIR) }
            lcwd = target
        case "ls":
            let long = args.contains("-l")
            let path = remote(args.first { !$0.hasPrefix("-") }, cwd)
            let entries = try connection.run { fs, _ throws(SFTPError) -> [RemoteEntry] in
                let e = try fs.stat(path)
                return e.isDirectory ? try fs.list(path) : [e]
            }
            // Names are the server's: shown, so a newline in one cannot fake a line.
            entries.forEach { invocation.print(long ? $0.longListing : $0.name.shown) }
        case "mkdir", "rmdir", "rm":
            guard args.count == 1 else { throw usage("\(command) path") }
            let path = remote(args[0], cwd)
            try connection.run { fs, _ throws(SFTPError) in
                switch command {
                case "mkdir": try fs.mkdir(path)
                case "rmdir": try fs.rmdir(path)
                default: try fs.remove(path)
                }
            }
        case "rename":
            guard args.count == 2 else { throw usage("rename old new") }
            try connection.run { fs, _ throws(SFTPError) in try fs.rename(remote(args[0], here), remote(args[1], here)) }
        case "chmod":
            guard args.count == 2, let mode = UInt32(args[0], radix: 8), mode <= 0o7777 else { throw usage("chmod mode path (mode in octal, e.g. 644)") }
            try connection.run { fs, _ throws(SFTPError) in try fs.chmod(remote(args[1], here), mode: mode) }
        case "stat":
            guard args.count == 1 else { throw usage("stat path") }
            let path = remote(args[0], cwd)
            let (entry, target) = try connection.run { fs, _ throws(SFTPError) -> (RemoteEntry, String?) in
                let e = try fs.stat(path, follow: false)
                return (e, e.isSymlink ? try? fs.readlink(path) : nil)
            }
            invocation.print(entry.longListing + (target.map { " -> \($0.shown)" } ?? ""))
        case "df":
            let path = remote(args.first { !$0.hasPrefix("-") }, cwd)
            let space = try connection.run { fs, _ throws(SFTPError) in try fs.diskSpace(path) }
            invocation.print("        Size         Used        Avail   (root)    %Capacity")
            let used = space.total - min(space.available, space.total)
            // The server's numbers: a percentage of sizes near 2^64 must not overflow.
            let pct = space.total > 0 ? UInt64(Double(used) / Double(space.total) * 100) : 0
            invocation.print("\(ConsoleProgress.size(space.total).rightAligned(12)) \(ConsoleProgress.size(used).rightAligned(12)) \(ConsoleProgress.size(space.available).rightAligned(12))           \(pct)%")
        case "get", "put":
            try transfer(command, args, cwd: cwd, lcwd: lcwd)
        default:
            throw SFTPError(.failed, "Invalid command '\(command.shown)' (help lists them).")
        }
    }

    private func usage(_ text: String) -> SFTPError { SFTPError(.failed, "usage: \(text)") }

    private func transfer(_ command: String, _ args: [String], cwd: String, lcwd: String) throws(SFTPError) {
        let cli = SFTPCommand(invocation: invocation, host: host, transport: transport)
        let p: SFTPCommand.Parsed
        do { p = try cli.parse(args) } catch {
            if error.status == 0 { return }   // --help: the usage is printed
            throw usage("\(command) [-r] [--resume] source [target]")
        }
        guard (1...2).contains(p.operands.count) else { throw usage("\(command) [-r] [--resume] source [target]") }
        let observer = ConsoleProgress(mode: ConsoleProgress.mode(json: p.json, stderr: invocation.stderrFD),
                                       out: invocation.stdoutFD, err: invocation.stderrFD,
                                       verb: command == "get" ? "downloaded" : "uploaded")
        let status: Int32
        if command == "get" {
            let source = remote(p.operands[0], cwd)
            let target = absoluteLocal(p.operands.count == 2 ? p.operands[1] : ".", in: lcwd)
            status = cli.perform(.download, remote: RemoteArgument(host: destination, path: source), local: target, options: p.options, observer: observer)
        } else {
            let source = absoluteLocal(p.operands[0], in: lcwd)
            let target = remote(p.operands.count == 2 ? p.operands[1] : ".", cwd)
            status = cli.perform(.upload, remote: RemoteArgument(host: destination, path: target), local: source, options: p.options, observer: observer)
        }
        if status != 0 { throw SFTPError(.failed, "sftp: \(command) did not finish (see above)") }
    }

    /// Splits a command line into words: whitespace separates, quotes group, backslash escapes.
    static func split(_ line: String) throws(SFTPError) -> [String] {
        var words: [String] = [], word = "", inWord = false
        var quote: Character?
        var escaped = false
        for ch in line {
            if escaped { word.append(ch); escaped = false; inWord = true; continue }
            if ch == "\\" && quote != "'" { escaped = true; continue }
            if let q = quote {
                if ch == q { quote = nil } else { word.append(ch) }
                continue
            }
            if ch == "\"" || ch == "'" { quote = ch; inWord = true; continue }
            if ch == " " || ch == "\t" {
                if inWord { words.append(word); word = ""; inWord = false }
                continue
            }
            word.append(ch)
            inWord = true
        }
        if quote != nil { throw SFTPError(.failed, "sftp: unterminated quote") }
        if inWord { words.append(word) }
        return words
    }
}
