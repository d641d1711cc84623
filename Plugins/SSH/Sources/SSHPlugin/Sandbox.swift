import Foundation
import Glibc
import TermhostSDK

/// `termhost sandbox start|stop|status`: an OpenSSH sshd on loopback, run as the current user
/// with keys generated for it, and a saved host `sandbox` that logs into it, so a newcomer can
/// try `termhost ssh sandbox` without a server of their own. Everything lives in
/// `$XDG_STATE_HOME/termhost/sandbox/`; its host key is trusted through Termhost's own
/// known_hosts (`$XDG_DATA_HOME/termhost/known_hosts`), never by editing ~/.ssh.
struct Sandbox {
    let vault: Vault
    let log: (String) -> Void

    static var directory: String {
        let env = ProcessInfo.processInfo.environment
        let state = env["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? homeDirectory + "/.local/state"
        return state + "/termhost/sandbox"
    }

    static var sshd: String { ProcessInfo.processInfo.environment["TERMHOST_SSHD"] ?? "/usr/sbin/sshd" }

    var dir: String { Sandbox.directory }

    func run(_ c: CommandInvocation) -> Int32 {
        switch c.arguments.first {
        case "start": return start(c)
        case "stop": return stop(c)
        case "status", nil: return status(c)
        default:
            c.printError("usage: termhost sandbox start|stop|status")
            return 2
        }
    }

    /// The pid of the running sandbox sshd, if any. A pid file can outlive its process and the
    /// number be reused, so the process must still be an sshd started with this sandbox's
    /// configuration before anything is signalled.
    var runningPID: pid_t? {
        guard let text = try? String(contentsOfFile: dir + "/sshd.pid", encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
              let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
              String(decoding: cmdline, as: UTF8.self).contains(dir + "/sshd_config") else { return nil }
        return pid
    }

    var port: Int? {
        guard let text = try? String(contentsOfFile: dir + "/port", encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func status(_ c: CommandInvocation) -> Int32 {
        if let pid = runningPID, let port {
            c.print("sandbox: running (sshd pid \(pid) on 127.0.0.1:\(port)); try 'termhost ssh sandbox'")
            return 0
        }
        c.print("sandbox: not running; start it with 'termhost sandbox start'")
        return 3
    }

    func start(_ c: CommandInvocation) -> Int32 {
        if runningPID != nil { return status(c) }
        guard FileManager.default.isExecutableFile(atPath: Sandbox.sshd) else {
            c.printError("termhost sandbox: \(Sandbox.sshd) not found; install Debian's openssh-server (apt-get install openssh-server)")
            return 1
        }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for (file, type) in [("host_ed25519_key", "ed25519"), ("user_ed25519_key", "ed25519")]
            where !FileManager.default.fileExists(atPath: dir + "/" + file) {
                try run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "termhost-sandbox", "-f", dir + "/" + file])
            }
            let user = SSHConnection.localUser()
            try FileManager.default.copyItem(atPath: dir + "/user_ed25519_key.pub", toPath: dir + "/authorized_keys.tmp")
            _ = rename(dir + "/authorized_keys.tmp", dir + "/authorized_keys")
            let port = TCPSocket.freeLoopbackPort()
            let config = """
            # Written by termhost sandbox start; regenerated on every start.
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(dir)/host_ed25519_key
            PidFile \(dir)/sshd.pid
            AuthorizedKeysFile \(dir)/authorized_keys
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            AllowUsers \(user)
            Subsystem sftp internal-sftp
            """
            try config.write(toFile: dir + "/sshd_config", atomically: true, encoding: .utf8)
            try String(port).write(toFile: dir + "/port", atomically: true, encoding: .utf8)
            if getuid() == 0 { mkdir("/run/sshd", 0o755) }   // sshd's privilege separation directory
            try run(Sandbox.sshd, ["-f", dir + "/sshd_config", "-E", dir + "/sshd.log"])
            for _ in 0..<100 where runningPID == nil { usleep(20_000) }
            guard runningPID != nil else {
                c.printError("termhost sandbox: sshd did not start; see \(dir)/sshd.log")
                return 1
            }
            if let existing = try vault.host("sandbox"), !(existing.tags ?? []).contains("sandbox") {
                if let pid = runningPID { kill(pid, SIGTERM) }   // never kill(0): that is our own process group
                c.printError("termhost sandbox: you have your own saved host named 'sandbox'; rename it (termhost hosts rm/add) and start again")
                return 1
            }
            try trustHostKey(port: port)
            try vault.save(HostRecord(name: "sandbox", address: "127.0.0.1", port: port, user: user,
                                      identityFile: dir + "/user_ed25519_key", tags: ["sandbox"], jump: nil))
            c.print("sandbox: sshd started on 127.0.0.1:\(port) as \(user); saved host 'sandbox'. Try: termhost ssh sandbox")
            return 0
        } catch {
            c.printError("termhost sandbox: \(error)")
            return 1
        }
    }

    func stop(_ c: CommandInvocation) -> Int32 {
        guard let pid = runningPID else { c.print("sandbox: not running"); return 0 }
        kill(pid, SIGTERM)
        for _ in 0..<100 where kill(pid, 0) == 0 { usleep(20_000) }
        unlink(dir + "/sshd.pid")
        c.print("sandbox: stopped")
        return 0
    }

    /// Adds the sandbox's host key to Termhost's own known_hosts, replacing an older one.
    func trustHostKey(port: Int) throws {
        let key = try String(contentsOfFile: dir + "/host_ed25519_key.pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        let file = HostKeyTrust.termhostKnownHosts
        let dir = PathText.parent(file)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try HostKeyTrust.checkOwnKnownHosts()
        let kept = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { !$0.hasPrefix("[127.0.0.1]:") || !$0.hasSuffix(" termhost-sandbox") }
        let text = (kept.map(String.init) + ["[127.0.0.1]:\(port) \(key) termhost-sandbox"]).joined(separator: "\n") + "\n"
        // 0600 whatever the umask, written beside and renamed over (never through a link).
        let tmp = file + ".tmp-\(getpid())"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PluginError("cannot write \(tmp): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(tmp, file) == 0 else {
            unlink(tmp)
            throw PluginError("cannot write \(file): \(String(cString: strerror(errno)))")
        }
    }

    private func run(_ executable: String, _ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw PluginError("\(executable) \(args.joined(separator: " ")) failed with status \(p.terminationStatus)")
        }
    }
}
