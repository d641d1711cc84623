import Foundation
import Glibc
import Testing
import TestSupport

/// `metrics serve --background`: the Prometheus endpoint runs in the daemon after the command
/// returned, the daemon serves it again when it starts, and `--stop` ends it for good. The
/// monitor samples the test's own sshd host (this machine).
@Suite struct MetricsInDaemonTests {
    @Test func aBackgroundEndpointIsServedByTheDaemonAgainAfterARestartUntilStopped() throws {
        let setup = try DaemonSetup("termhost-metrics-daemon", plugins: ["libMetricsPlugin.so": "org.termhost.metrics"], start: false)
        defer { setup.stop() }
        let (dir, ssh, daemon) = (setup.dir, setup.ssh, setup.daemon)
        #expect(try ssh.termhost(["metrics", "add", ssh.target]).status == 0)
        #expect(try ssh.termhost(["metrics", "serve", "--background", "--listen", "nowhere"]).status == 2, "a bad --listen is refused here")
        #expect(try ssh.termhost(["daemon", "status"]).status == 1, "and starts no daemon")

        // No daemon runs: the command starts one, which serves after the command returned.
        let started = try ssh.termhost(["metrics", "serve", "--background", "--listen", "127.0.0.1:0"], timeout: 120)
        defer { _ = try? daemon.run("daemon", "stop") }
        #expect(started.status == 0 && started.stdout.contains("in the daemon until 'termhost metrics serve --stop --listen 127.0.0.1:0'"),
                "\(started.output)")
        let url = try #require(started.stdout.firstMatch(of: /http:\/\/127\.0\.0\.1:[0-9]+\/metrics/).map { String($0.0) })
        #expect(Self.waitForState(url, host: ssh.target), "the daemon's sampler answers scrapes")

        // Another daemon serves it again by itself (on a new port: the kernel picks for 0).
        #expect(try daemon.run("daemon", "stop").status == 0)
        try daemon.start()
        var again: String?
        #expect(Wait.until(timeout: 60) {
            again = dir.hostLog.matches(of: /serving Prometheus metrics on (http:\/\/127\.0\.0\.1:[0-9]+\/metrics)/).last.map { String($0.1) }
            return again != nil && again != url
        }, "\(daemon.log)")
        if let again { #expect(Self.waitForState(again, host: ssh.target)) }

        // --stop ends it and its start: the next daemon serves nothing.
        let stop = try ssh.termhost(["metrics", "serve", "--stop"])
        #expect(stop.status == 0 && stop.stdout.contains("Stopped serving Prometheus metrics on 127.0.0.1:0 in the daemon"), "\(stop.output)")
        if let again { #expect(HTTP.get(again) == nil, "nothing listens there any more") }
        daemon.stop()
        try daemon.start()
        let servedAfter = dir.hostLog.components(separatedBy: "serving Prometheus metrics on").count - 1
        #expect(servedAfter == 2, "served twice in all, not a third time: \(dir.hostLog)")
    }

    @Test func twoWatchingTerminalsShareTheDaemonsOneSampler() throws {
        // The metrics feature sets concurrent_commands: two `metrics watch` run in the daemon
        // at once, each on its own terminal, and read one sampler: one SSH log-in on the server.
        let setup = try DaemonSetup("termhost-metrics-daemon", plugins: ["libMetricsPlugin.so": "org.termhost.metrics"])
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        #expect(try ssh.termhost(["metrics", "add", ssh.target]).status == 0)
        var env = ssh.environment
        env["TERM"] = "xterm-256color"
        let first = try TmuxSession(command: [Paths.termhost, "metrics", "watch"], environment: env, width: 120, height: 30)
        defer { first.close() }
        #expect(first.waitFor("[live]").contains("[live]"))
        let second = try TmuxSession(command: [Paths.termhost, "metrics", "watch"], environment: env, width: 100, height: 24)
        defer { second.close() }
        #expect(second.waitFor("[live]").contains("[live]"))
        #expect(daemon.log.components(separatedBy: "runs 'metrics' in scene").count == 4, "add and both watches ran there: \(daemon.log)")
        #expect(ssh.server.log.components(separatedBy: "Accepted publickey for").count - 1 == 1, "one sampler, one log-in: \(ssh.server.log)")
        // Each terminal is its own: Ctrl-C on one (a cancellation in the daemon, not a signal
        // there) ends that watch and gives its terminal back; the other keeps drawing.
        first.press("C-c")
        let ended = first.waitFor("[exit")
        #expect(ended.contains("[exit 130]") && !ended.contains("MEM ["), "\(ended)")
        second.type("m", enter: false)
        #expect(second.waitFor("by memory").contains("by memory"), "the second dashboard still answers its keys")
        second.type("q", enter: false)
        #expect(second.waitFor("[exit 0]").contains("[exit 0]"))
    }

    @Test func theDaemonSamplesEveryMonitorWithNothingShowingIt() throws {
        // Log-ins count samplers here: none takes a connection another left kept.
        let setup = try DaemonSetup("termhost-metrics-daemon", plugins: ["libMetricsPlugin.so": "org.termhost.metrics"],
                                    policy: #"{ "settings": { "org.termhost.ssh": { "connectionIdleTimeout": 0 } } }"#, start: false)
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        #expect(try ssh.termhost(["metrics", "add", ssh.target]).status == 0)
        try daemon.start()
        func logins() -> Int { ssh.server.log.components(separatedBy: "Accepted publickey for").count - 1 }
        // Nothing shows the host, yet the daemon logs in to sample it.
        #expect(Wait.until(timeout: 60) { logins() == 1 }, "\(daemon.log)")
        // A show in the daemon reads that sampler, live already: no second log-in.
        let show = try ssh.termhost(["metrics", "show", ssh.target, "--json"])
        #expect(show.status == 0 && show.stdout.contains("\"uptime\""), "\(show.output)")
        #expect(logins() == 1, "show shared the daemon's sampler: \(ssh.server.log)")
        // A monitor removed stops being sampled; one added is sampled within the 2 s step.
        #expect(try ssh.termhost(["metrics", "rm", ssh.target]).status == 0)
        #expect(try ssh.termhost(["metrics", "add", ssh.target]).status == 0)
        #expect(Wait.until(timeout: 60) { logins() == 2 }, "\(daemon.log)")
    }

    /// Whether a scrape reports the host's sampler state within a minute.
    static func waitForState(_ url: String, host: String) -> Bool {
        Wait.until(timeout: 60) { HTTP.get(url)?.body.contains("termhost_metrics_state{host=\"\(host)\"") == true }
    }
}
