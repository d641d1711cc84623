import Foundation
import Testing
import TestSupport

/// Ctrl-C in `forward run`: every rule stops and says so, and the command returns when the
/// host asks it to stop (termhost.cancel/1) instead of being abandoned at the shutdown bound.
@Suite struct InterruptEndToEndTests {
    @Test func ctrlCStopsEveryRuleEachSayingSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["forward", "add", "--name", "first", h.target, "-L", "0:127.0.0.1:9"])
        try h.termhost(["forward", "add", "--name", "second", h.target, "-L", "0:127.0.0.1:10"])
        let run = try h.run(["first", "second"])
        #expect(run.waitForCount(of: "active, listening on 127.0.0.1:", 2), "\(run.output)")

        let stop = run.interrupt()
        #expect(stop.status == 130)
        let lines = run.output.split(separator: "\n").map(String.init)
        let stopped = lines.filter { $0.hasSuffix(": stopped") }
        #expect(stopped == ["forward 'first': stopped", "forward 'second': stopped"], "\(run.output)")
        #expect(!run.output.contains("did not return"), "the command was abandoned: \(run.output)")
        let list = try h.termhost(["forward", "list"]).stdout
        #expect(list.split(separator: "\n").filter { $0.hasSuffix("  stopped") }.count == 2, "\(list)")
    }
}
