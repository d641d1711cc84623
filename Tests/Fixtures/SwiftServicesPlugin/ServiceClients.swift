// Features of the Swift services fixture that use the plugin-provided services through the
// SDK's wrappers (SSHTransport's channels, SFTPFiles, MetricsSnapshots). Each is its own
// feature because it requires its service: without the providing plugin it is simply not
// enabled, and the host-service commands of SwiftServices keep working.
import Glibc
import Synchronization
import TermhostSDK

/// `termhost swssh DESTINATION`: a shell resized before it runs `stty size`, and an exec channel.
final class SwiftSSHClient: Feature {
    static let info = FeatureInfo(
        id: "org.test.swift-services.ssh", version: "1.0.0", displayName: "Swift SSH channels client", order: 30,
        requiresServices: ["org.termhost.ssh.transport/1"],
        commands: [Command("swssh", summary: "exercise the Swift SDK's SSH channel wrappers")])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let destination = command.arguments.first, let transport = SSHTransport(host: host) else {
            command.printError("usage: termhost swssh DESTINATION")
            return 2
        }
        do {
            command.print("offers: bounded exec \(transport.offersBoundedExec), open_exec \(transport.offersOpenExec), "
                          + "watch \(transport.offersWatch), splice \(transport.offersSplice)")
            let connection = try transport.open(destination, scene: command.scene)
            defer { connection.close() }
            let shell = try connection.openShell(term: "dumb", columns: 80, rows: 24)
            try connection.resizeShell(shell, columns: 100, rows: 30)
            command.print("shell: " + ChannelText.exchange(shell, send: "stty size; exit\n"))
            command.print("exec: " + ChannelText.exchange(try connection.openExec("echo from-open-exec"), send: nil))
            var out: [UInt8] = [], err: [UInt8] = []
            let status = try connection.exec("cat; echo to-stderr >&2; exit 3", stdin: Array("from-stdin".utf8),
                                             stdout: { out += $0 }, stderr: { err += $0 })
            command.print("exec status \(status): \(String(decoding: out, as: UTF8.self)) / \(String(decoding: err, as: UTF8.self))", terminator: "")
            do {
                _ = try connection.exec("sleep 30", deadline: .milliseconds(300))
                command.print("bounded: finished")
            } catch {
                command.print("bounded: error \(error.code)")
            }
            return 0
        } catch {
            command.printError("error: \(error.code) \(error.message)")
            return 1
        }
    }
}

/// `termhost swfiles DESTINATION DIRECTORY`: every files-service call, one line each.
final class SwiftFilesClient: Feature {
    static let info = FeatureInfo(
        id: "org.test.swift-services.files", version: "1.0.0", displayName: "Swift files client", order: 31,
        requiresServices: ["org.termhost.sftp.files/1"],
        commands: [Command("swfiles", summary: "exercise the Swift SDK's files wrapper")])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard command.arguments.count == 2, let files = SFTPFiles(host: host) else {
            command.printError("usage: termhost swfiles DESTINATION DIRECTORY")
            return 2
        }
        let (destination, dir) = (command.arguments[0], command.arguments[1])
        /// Runs one call and prints "name: result" or "name: error CODE MESSAGE".
        func line(_ name: String, _ body: () throws -> String) {
            do { command.print("\(name): \(try body())") } catch {
                let failure = error as? PluginError
                command.print("\(name): error \(failure?.code ?? -1) \(failure?.message ?? "\(error)")")
            }
        }
        do throws(PluginError) {
            let session = try files.open(destination, scene: command.scene)
            line("mkdir") { try session.makeDirectory(dir + "/made"); return "ok" }
            line("rename") { try session.rename(dir + "/made", to: dir + "/renamed"); return "ok" }
            line("list") { try session.list(dir) }
            line("stat") { try session.stat(dir + "/file.txt") }
            line("read") { String(decoding: try session.read(dir + "/file.txt", offset: 2, maxBytes: 5), as: UTF8.self) }
            line("rmdir") { try session.removeDirectory(dir + "/renamed"); return "ok" }
            line("rm") { try session.removeFile(dir + "/file.txt"); return "ok" }
            line("rm again") { try session.removeFile(dir + "/file.txt"); return "ok" }
            session.close()
            line("stale") { try session.list(dir) }
        } catch {
            command.print("open: error \(error.code) \(error.message)")
            return 1
        }
        final class Seen: Sendable { let last = Mutex<(calls: Int, bytes: UInt64, total: UInt64)>((0, 0, 0)) }
        let seen = Seen()
        let request = SFTPFiles.TransferRequest(upload: false, destination: destination, remotePath: dir + "/big.bin",
                                                localPath: dir + "/copy.bin", bytesPerSecond: 100_000_000)
        line("get") {
            try files.transfer(request, scene: command.scene, progress: { _, bytes, total in
                seen.last.withLock { $0 = ($0.calls + 1, bytes, total) }
            }, summary: { command.print("get summary: \($0)") })
            return "ok"
        }
        let last = seen.last.withLock { $0 }
        command.print("progress: \(last.calls > 0 ? "called" : "never called"), last \(last.bytes) of \(last.total)")
        line("get again") { try files.transfer(request, scene: command.scene); return "ok" }
        var skipping = request
        skipping.conflict = .skip
        line("get skip") {
            try files.transfer(skipping, scene: command.scene, summary: { command.print("get skip summary: \($0)") })
            return "ok"
        }
        line("stop") { try files.stop(cookie: 99, pause: true); return "ok" }
        return 0
    }
}

/// `termhost swmetrics HOST [live]`: the snapshot service before (and with `live`, after) a
/// `metrics show HOST` in this process started a sampler for HOST.
final class SwiftMetricsClient: Feature {
    static let info = FeatureInfo(
        id: "org.test.swift-services.metrics", version: "1.0.0", displayName: "Swift metrics client", order: 32,
        after: ["org.termhost.metrics"], requiresServices: ["org.termhost.metrics.snapshot/1"],
        commands: [Command("swmetrics", summary: "exercise the Swift SDK's metrics snapshot wrapper")])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let target = command.arguments.first, let snapshots = MetricsSnapshots(host: host) else {
            command.printError("usage: termhost swmetrics HOST [live]")
            return 2
        }
        func report() {
            do throws(PluginError) { command.print("hosts: \(try snapshots.listHosts())") } catch {
                command.print("hosts: error \(error.code) \(error.message)")
            }
            do throws(PluginError) { command.print("snapshot: \(try snapshots.snapshot(of: target))") } catch {
                command.print("snapshot: error \(error.code) \(error.message)")
            }
        }
        report()
        guard command.arguments.dropFirst().first == "live" else { return 0 }
        do {
            command.print("show: \(try host.commands!.run(["metrics", "show", target], scene: command.scene))")
        } catch {
            command.print("show: error \(error.code) \(error.message)")
        }
        report()
        return 0
    }
}

/// Text through a bridged channel's local socket.
enum ChannelText {
    /// Writes `send` (if any), reads until end-of-file or 20 s, closes fd and returns the
    /// non-empty lines that came, joined by " | ".
    static func exchange(_ fd: Int32, send: String?) -> String {
        if let send { _ = Array(send.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = time(nil) + 20
        while time(nil) < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 1000) >= 0 else { break }
            if pfd.revents == 0 { continue }
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[..<n]
        }
        close(fd)
        return String(decoding: out, as: UTF8.self).split(whereSeparator: { $0.isNewline }).joined(separator: " | ")
    }
}
