import Foundation
import Glibc
import TermhostSDK

/// `termhost sftp ...`: the one-shot forms for scripts, and the interactive shell.
struct SFTPCommand {
    static let usage = """
    usage: termhost sftp [-P PORT] HOST                   an interactive shell (help lists its commands)
           termhost sftp get [OPTIONS] HOST:PATH [LOCAL]    download (LOCAL defaults to the current directory)
           termhost sftp put [OPTIONS] LOCAL HOST:PATH      upload
           termhost sftp ls [-l] [-P PORT] HOST:PATH        list a directory
           termhost sftp paused                             transfers paused with a checkpoint
           termhost sftp cancel LOCAL | [-P PORT] HOST:PATH discard a paused transfer (named by its local
                                                            file, or an upload's target) and its partial file
    HOST is a saved host (termhost hosts list) or user@host; -P gives a port.
    OPTIONS: -r directories, recursively (empty ones too; symbolic links are skipped)
             --resume  continue paused transfers after checking the source is unchanged
             --overwrite | --skip | --keep-both | --fail  when a target exists (default: ask
                       on a terminal, fail otherwise)
             -l KBIT   limit the bandwidth to KBIT kbit/s, like sftp -l
             --json    progress as JSON lines on stdout
             --background  queue it in the daemon and return: it goes on when the terminal
                       closes, and after a lost connection (termhost transfers lists them)
    Downloads go to a partial file renamed into place when complete; uploads to a remote partial
    renamed when complete. Connection loss or an interrupt pauses: the partial file is kept.
    Settings (feature org.termhost.sftp): maxActive (1-100, default 15) files at once,
    maxPerHost (1-min(50, maxActive), default 5) per host, segments (1-4, default one per
    core but one) connections for one large file, channels (1-8, default 8) SFTP channels
    of a connection for one large upload.
    """

    let invocation: CommandInvocation
    let host: PluginHost
    let transport: SSHTransport

    var checkpoints: Checkpoints { Checkpoints(store: host.store) }

    func run() -> Int32 {
        var args = invocation.arguments
        guard let verb = args.first else { invocation.printError(SFTPCommand.usage); return 2 }
        switch verb {
        case "get", "put":
            args.removeFirst()
            return transfer(verb == "get" ? .download : .upload, args)
        case "ls":
            args.removeFirst()
            return list(args)
        case "paused":
            return paused()
        case "cancel":
            let p: Parsed
            do { p = try parse(Array(args.dropFirst())) } catch { return error.status }
            guard p.operands.count == 1 else {
                invocation.printError("usage: termhost sftp cancel LOCAL | [-P PORT] HOST:PATH")
                return 2
            }
            return cancel(p.operands[0], port: p.port)
        case "-h", "--help", "help":
            invocation.print(SFTPCommand.usage)
            return 0
        default:
            let parsed: ParsedArguments
            do { parsed = try invocation.parse(args, with: SFTPCommand.shellArguments) } catch { return error.status }
            guard let target = parsed.arguments.first else { invocation.printError(SFTPCommand.usage); return 2 }
            let port: Int?
            do { port = try parsed.integer("-P", in: 1...65535) } catch { return invocation.reportUsageError(error) }
            let destination = port.map { "\(target):\($0)" } ?? target
            return SFTPShell(invocation: invocation, host: host, transport: transport, destination: destination).run()
        }
    }

    /// -l in kbit/s: OpenSSH's sftp takes 1 to 100 * 1024 * 1024.
    static let limitBounds = Pacing.kbitBounds

    struct Parsed {
        var options = TransferOptions()
        var json = false
        var background = false
        var long = false
        var port: Int?
        var operands: [String] = []
    }

    /// `termhost sftp [-P PORT] HOST`: the interactive shell.
    static let shellArguments = CommandArguments("termhost sftp", usage: usage, options: [.value("-P")], maxArguments: 1)

    /// The options of get, put, cancel and ls. `listing`: -l means a long listing (ls), not a
    /// bandwidth limit (get, put).
    static func arguments(listing: Bool) -> CommandArguments {
        CommandArguments("termhost sftp", usage: usage, options: [
            .flag("-r", "-R", "--recursive"), .flag("--resume", "-a"), .flag("--json"),
            listing ? .flag("-l") : .value("-l"), .value("-P"),
            .flag("--overwrite"), .flag("--skip"), .flag("--keep-both"), .flag("--fail"),
        ] + (listing ? [] : [.flag("--background")]))
    }

    /// Parses options shared by get, put and ls; throws the status to return once a usage
    /// error (or the usage, for --help) is written.
    func parse(_ args: [String], listing: Bool = false) throws(CommandFinished) -> Parsed {
        let parsed = try invocation.parse(args, with: SFTPCommand.arguments(listing: listing))
        var p = Parsed()
        p.json = invocation.jsonOutput || parsed.has("--json")
        p.background = !listing && parsed.has("--background")
        p.options.scene = invocation.scene
        p.options.recursive = parsed.has("-r")
        p.options.resume = parsed.has("--resume")
        p.long = listing && parsed.has("-l")
        p.operands = parsed.arguments
        do {
            // As OpenSSH's sftp -l: Kbit/s of 1024 bits, at most 100 Gbit/s (its bound too), so
            // the bytes per second fit with room to spare (18014398509481985 used to trap).
            if !listing, let kbit = try parsed.integer("-l", in: SFTPCommand.limitBounds, unit: "kbit/s") {
                p.options.limit = UInt64(kbit) * 1024 / 8
            }
            p.port = try parsed.integer("-P", in: 1...65535)
        } catch {
            throw CommandFinished(status: invocation.reportUsageError(error))
        }
        for given in parsed.occurrences {
            guard let policy = ConflictPolicy.allCases.first(where: { "--" + $0.rawValue == given.option }) else { continue }
            if let earlier = p.options.conflict, earlier != policy {
                invocation.printError("termhost sftp: --\(earlier.rawValue) and \(given.spelled) contradict each other")
                throw CommandFinished(status: 2)
            }
            p.options.conflict = policy
        }
        return p
    }

    func transfer(_ direction: FileJob.Direction, _ args: [String]) -> Int32 {
        let p: Parsed
        do { p = try parse(args) } catch { return error.status }
        let verbWord = direction == .download ? "get" : "put"
        let remoteText: String, localText: String
        switch (direction, p.operands.count) {
        case (.download, 1): (remoteText, localText) = (p.operands[0], ".")
        case (.download, 2): (remoteText, localText) = (p.operands[0], p.operands[1])
        case (.upload, 2): (localText, remoteText) = (p.operands[0], p.operands[1])
        default:
            invocation.printError("usage: termhost sftp \(verbWord) [-r] [--resume] [--overwrite|--skip|--keep-both|--fail] [-l KBIT] [--json] [--background] " +
                                  (direction == .download ? "HOST:PATH [LOCAL]" : "LOCAL HOST:PATH"))
            return 2
        }
        guard let remote = RemoteArgument(remoteText, port: p.port) else {
            invocation.printError("termhost sftp: '\(remoteText.shown)' is not HOST:PATH")
            return 2
        }
        let local = absoluteLocal(localText, in: host.workingDirectory(scene: invocation.scene))
        if p.background { return queue(direction, remote: remote, local: local, options: p.options, json: p.json) }
        let observer = ConsoleProgress(mode: ConsoleProgress.mode(json: p.json, stderr: invocation.stderrFD),
                                       out: invocation.stdoutFD, err: invocation.stderrFD,
                                       verb: direction == .download ? "downloaded" : "uploaded")
        return perform(direction, remote: remote, local: local, options: p.options, observer: observer)
    }

    /// Runs one get or put and maps the result to an exit status: 0 all done, 1 anything
    /// failed, paused or was refused (the message says which and why).
    func perform(_ direction: FileJob.Direction, remote: RemoteArgument, local: String, options: TransferOptions,
                 observer: ConsoleProgress) -> Int32 {
        for note in TransferQueue.shared.apply(settingsOf: host) { invocation.printError("termhost sftp: setting \(note)") }
        let transfers = Transfers(transport: transport, checkpoints: checkpoints, ask: conflictQuestion())
        let control = TransferControl(limitBytesPerSecond: options.limit)
        do {
            let summary = direction == .download
                ? try transfers.download(host: remote.host, remote: remote.path, local: local, options: options, observer: observer, control: control)
                : try transfers.upload(host: remote.host, local: local, remote: remote.path, options: options, observer: observer, control: control)
            return summary.failed + summary.paused + summary.cancelled + summary.notStarted == 0 ? 0 : 1
        } catch {
            if observer.mode == .json { observer.notice(error.message) } else { invocation.printError(error.message) }
            return error.exitStatus
        }
    }

    /// A terminal question for conflicts, or nil when nobody can answer (fail closed).
    func conflictQuestion() -> (@Sendable (Int, String) -> ConflictPolicy?)? {
        guard let interact = host.interact, interact.canPrompt(scene: invocation.scene) else { return nil }
        let scene = invocation.scene
        return { count, first in
            let question = count == 1 ? "\(first) already exists." : "\(count) targets already exist (\(first), ...)."
            guard let choice = try? interact.choose(question + " What now?", from: ["overwrite", "skip", "keep both", "cancel"], scene: scene) else { return nil }
            return [ConflictPolicy.overwrite, .skip, .keepBoth, .fail][choice]
        }
    }

    func list(_ args: [String]) -> Int32 {
        let p: Parsed
        do { p = try parse(args, listing: true) } catch { return error.status }
        guard p.operands.count == 1 else { invocation.printError("usage: termhost sftp ls [-l] [-P PORT] [--json] HOST:PATH"); return 2 }
        guard let remote = RemoteArgument(p.operands[0], port: p.port) else {
            invocation.printError("termhost sftp: '\(p.operands[0].shown)' is not HOST:PATH")
            return 2
        }
        do {
            // A listing is a few requests: it may ride on a connection the daemon holds.
            let connection = try SFTPConnection(transport: transport, destination: remote.host, scene: invocation.scene, shared: true)
            defer { connection.close() }
            let entries = try connection.run { fs, _ throws(SFTPError) -> [RemoteEntry] in
                let entry = try fs.stat(remote.path)
                return entry.isDirectory ? try fs.list(remote.path) : [entry]
            }
            if p.json {
                invocation.print("[" + entries.map(\.json).joined(separator: ",") + "]")
            } else {
                // Names are the server's: shown, so a newline in one cannot fake a line.
                entries.forEach { invocation.print(p.long ? $0.longListing : $0.name.shown) }
            }
            return 0
        } catch {
            invocation.printError(error.message)
            return error.exitStatus
        }
    }

    func paused() -> Int32 {
        let all = checkpoints.all()
        if invocation.jsonOutput {
            invocation.print("[" + all.map { c in
                "{\"direction\":\"\(c.checkpoint.direction)\",\"host\":\(JSONText.quoted(c.checkpoint.host)),\"remote\":\(JSONText.quoted(c.checkpoint.remotePath)),\"local\":\(JSONText.quoted(c.checkpoint.localPath)),\"partial\":\(JSONText.quoted(c.checkpoint.partialPath)),\"offset\":\(c.checkpoint.offset),\"size\":\(c.checkpoint.sourceSize)}"
            }.joined(separator: ",") + "]")
            return 0
        }
        if all.isEmpty { invocation.print("no paused transfers") }
        for (_, c) in all {
            let (from, to) = c.direction == "download" ? ("\(c.host):\(c.remotePath)", c.localPath) : (c.localPath, "\(c.host):\(c.remotePath)")
            invocation.print("\(c.direction) \(from.shown) -> \(to.shown): \(c.offset) of \(c.sourceSize) bytes")
        }
        return 0
    }

    /// Discards a paused transfer: removes its partial file (local, or remote over SFTP) and
    /// its checkpoint; a partial that cannot be removed is named.
    func cancel(_ target: String, port: Int?) -> Int32 {
        // HOST:PATH names an upload's target (in the server's absolute form, as checkpoints
        // are keyed); a local path either end of a paused transfer.
        let matches: [(key: String, checkpoint: Checkpoint)]
        if let remote = RemoteArgument(target, port: port) {
            do {
                let connection = try SFTPConnection(transport: transport, destination: remote.host, scene: invocation.scene)
                defer { connection.close() }
                let path = try connection.run { fs, _ throws(SFTPError) in try fs.canonical(remote.path) }
                let key = Checkpoints.key(upload: remote.host, path)
                matches = checkpoints.load(key).map { [(key, $0)] } ?? []
            } catch {
                invocation.printError(error.message)
                return error.exitStatus
            }
        } else {
            let path = absoluteLocal(target, in: host.workingDirectory(scene: invocation.scene))
            matches = checkpoints.all().filter { $0.checkpoint.localPath == path }
        }
        guard let (key, c) = matches.first else {
            invocation.printError("termhost sftp: no paused transfer to or from \(target.shown) (see termhost sftp paused)")
            return 1
        }
        guard matches.count == 1 else {
            invocation.printError("termhost sftp: \(target.shown) is in \(matches.count) paused transfers; name the upload's target as HOST:PATH")
            return 1
        }
        return discard(key, c)
    }

    /// Removes a paused transfer's partial file and then its checkpoint; a partial that
    /// cannot be removed is named and the checkpoint kept.
    func discard(_ key: String, _ c: Checkpoint) -> Int32 {
        if let problem = PausedDiscard(transport: transport, checkpoints: checkpoints, scene: invocation.scene).discard(key, c) {
            invocation.printError((problem.hasPrefix("sftp:") ? "" : "termhost sftp: ") + problem)
            return 1
        }
        invocation.print("cancelled; removed \(c.direction == "download" ? c.partialPath.shown : "\(c.host):\(c.partialPath.shown)")")
        return 0
    }
}
