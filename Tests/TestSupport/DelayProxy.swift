import Foundation

/// Benchmarks/delay-proxy.c between a test and a server on loopback: every byte held for
/// `delayMilliseconds` in each direction (a long path, which the kernel here cannot make), so
/// what depends on the round trip (receive windows) runs as it would far away. The proxy binds
/// its own port (the kernel picks it) and prints it; stopped by `stop()` or deinit.
public final class DelayProxy {
    public let port: Int
    private var pid: pid_t = 0

    public init(in dir: TemporaryDirectory, target: Int, delayMilliseconds: Int) throws {
        let binary = dir.path + "/delay-proxy-bin"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", binary,
                                               Paths.root + "/Benchmarks/delay-proxy.c"])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc delay-proxy.c failed: \(cc.output)") }
        let log = dir.path + "/delay-proxy.log"
        var pid = try ServerProcess.spawn([binary, "--target", String(target), "--delay", String(delayMilliseconds)], log: log)
        var port: Int?
        let listening = Wait.until(timeout: 20) {
            port = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").first.flatMap { Int($0) }
            return port != nil
        }
        guard listening, let port else {
            ServerProcess.stop(&pid)
            throw Shell.Failure(description: "the delay proxy did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        self.port = port
        self.pid = pid
    }

    deinit { stop() }

    public func stop() { ServerProcess.stop(&pid) }
}
