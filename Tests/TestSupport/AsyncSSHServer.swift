import Foundation

/// A real asyncssh server (Debian's python3-asyncssh, installed by Scripts/setup.sh) on
/// 127.0.0.1, run from Tests/Fixtures/asyncssh_server.py, which says what each command does.
/// asyncssh is the server that ends channels in another order than OpenSSH: EOF first, the
/// exit status later. The script binds the port itself (the kernel picks it, the socket stays
/// bound) and prints it with its host key, generated for this run.
public final class AsyncSSHServer: PlainLoopbackSSHServer {
    public static let script = Paths.root + "/Tests/Fixtures/asyncssh_server.py"

    public let port: Int
    public let hostPublicKey: String
    private var pid: pid_t = 0
    private let logPath: String

    public convenience init(in dir: TemporaryDirectory, authorizedKeys: [String]) throws {
        try self.init(in: dir, authorizedKeys: authorizedKeys, options: [])
    }

    /// `options` are the script's (`--forged-host-certificate`).
    public init(in dir: TemporaryDirectory, authorizedKeys: [String], options: [String]) throws {
        let directory = dir.sub("asyncssh-\(Int.random(in: 0..<1_000_000))")
        let keys = directory + "/authorized_keys"
        try Data((authorizedKeys.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: keys))
        let logPath = directory + "/asyncssh.log"
        self.logPath = logPath
        // -W ignore: the python3-cryptography of Debian 12 warns about ciphers asyncssh imports.
        var pid = try ServerProcess.spawn(["/usr/bin/python3", "-W", "ignore", AsyncSSHServer.script, keys] + options, log: logPath)
        var first: [Substring] = []
        var exited = false
        let listening = Wait.until {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = log.split(separator: "\n").first, log.contains("\n") {
                first = line.split(separator: " ", maxSplits: 1)
                return true
            }
            var status: Int32 = 0
            exited = waitpid(pid, &status, WNOHANG) == pid
            return exited
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard listening, !exited, first.count == 2, let port = Int(first[0]) else {
            if !exited { ServerProcess.stop(&pid) }
            throw Shell.Failure(description: "the asyncssh server did not start (is python3-asyncssh installed?): \(log)")
        }
        self.port = port
        self.pid = pid
        hostPublicKey = String(first[1])
    }

    deinit { stop() }

    public func stop() { ServerProcess.stop(&pid) }

    public var knownHostsLine: String { "[127.0.0.1]:\(port) \(hostPublicKey)" }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
