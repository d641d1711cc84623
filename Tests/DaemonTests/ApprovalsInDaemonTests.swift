import Foundation
import Glibc
import Testing
import TestSupport

/// `ask --background`: the run goes on in the daemon with no terminal; a call that needs a
/// yes waits there, the notification hook is told (a loopback HTTP server stands in for ntfy),
/// another client answers it with `termhost approvals allow`, and one nobody answers is refused
/// when the policy's approvalTimeout passes; the audit log names who decided each. The model is
/// a ScriptedHTTPServer speaking Chat Completions; the calls run on the test's own sshd.
@Suite struct ApprovalsInDaemonTests {
    static func chunk(_ delta: String, finish: String? = nil) -> String {
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":\(delta),\"finish_reason\":\(finish.map { "\"\($0)\"" } ?? "null")}]}\n\n"
    }

    static func quoted(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s]), as: UTF8.self).dropFirst().dropLast().description
    }

    /// The model's turn that calls ssh_exec on web1 with `command`.
    static func exec(_ command: String) -> ScriptedHTTPServer.Response {
        let arguments = quoted("{\"host\":\"web1\",\"command\":\(quoted(command))}")
        let call = chunk("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"ssh_exec\",\"arguments\":\(arguments)}}]}")
        return ScriptedHTTPServer.Response(body: call + chunk("{}", finish: "tool_calls") + "data: [DONE]\n\n")
    }

    static func text(_ words: String) -> ScriptedHTTPServer.Response {
        ScriptedHTTPServer.Response(body: chunk("{\"content\":\(quoted(words))}") + chunk("{}", finish: "stop") + "data: [DONE]\n\n")
    }

    /// `termhost approvals --json`.
    static func pending(_ ssh: SSHHarness) -> [[String: Any]] {
        guard let r = try? ssh.termhost(["approvals", "--json"]) else { return [] }
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]] ?? []
    }

    @Test func aBackgroundRunsAskIsAnsweredFromAnotherClientAndOneNobodyAnswersIsRefused() throws {
        let setup = try DaemonSetup("termhost-approvals", plugins: ["libAssistantPlugin.so": "org.termhost.assistant"], start: false)
        defer { setup.stop() }
        let (dir, ssh, daemon) = (setup.dir, setup.ssh, setup.daemon)
        let first = dir.path + "/first-marker", second = dir.path + "/second-marker"
        let model = ScriptedHTTPServer(script: [Self.exec("touch \(first)"), Self.text("done"), Self.exec("touch \(second)"), Self.text("refused")])
        defer { model.stop() }
        let hook = ScriptedHTTPServer(script: [.init(headers: ["Content-Type: text/plain"], body: "ok"),
                                               .init(headers: ["Content-Type: text/plain"], body: "ok")])
        defer { hook.stop() }
        _ = dir.write("policy.json", """
            { "assistant": { "approvalTimeout": 3 },
              "settings": { "org.termhost.assistant": { "approvalNotify": {
                  "url": "http://127.0.0.1:\(hook.port)/termhost-approvals", "click": "https://example.test/approvals" } } } }
            """)
        #expect(try ssh.termhost(["hosts", "add", "web1", "127.0.0.1", "--port", "\(ssh.server.port)", "--user", NSUserName()]).status == 0)
        #expect(try ssh.termhost(["assistant", "provider", "add", "scripted", "--kind", "openai-compatible", "--model", "m",
                                  "--url", model.baseURL]).status == 0)
        // With no daemon there is nothing waiting, and nothing to answer: said, no daemon started.
        let none = try ssh.termhost(["approvals"])
        #expect(none.status == 0 && none.stdout == "no approvals are waiting (no daemon runs)\n", "\(none.output)")
        let nothing = try ssh.termhost(["approvals", "allow", "1"])
        #expect(nothing.status == 1 && nothing.stderr.contains("no daemon runs"), "\(nothing.output)")
        #expect(try ssh.termhost(["daemon", "status"]).status == 1)
        try daemon.start()

        // The command returns at once; the run's call waits in the daemon.
        let asked = try ssh.termhost(["ask", "--background", "--acting", "--host", "web1", "make the first marker"])
        #expect(asked.status == 0 && asked.stdout.contains("the run goes on in the daemon"), "\(asked.output)")
        var waiting: [[String: Any]] = []
        #expect(Wait.until(timeout: 60) { waiting = Self.pending(ssh); return !waiting.isEmpty }, "\(daemon.log)")
        let ask = try #require(waiting.first)
        #expect(ask["id"] as? Int == 1 && ask["tool"] as? String == "ssh_exec" && ask["host"] as? String == "web1"
                && ask["command"] as? String == "touch \(first)", "\(ask)")
        let shown = try ssh.termhost(["approvals"])
        #expect(shown.stdout.contains("The assistant wants to run ssh_exec on host web1:") && shown.stdout.contains("command: touch \(first)")
                && shown.stdout.contains("answer: termhost approvals allow 1"), "\(shown.output)")

        // The hook got an ntfy-style POST naming the tool and host, not the command.
        #expect(Wait.until(timeout: 30) { hook.requests.count == 1 }, "\(dir.hostLog)")
        let post = try #require(hook.requests.first)
        #expect(post.requestLine.hasPrefix("POST /termhost-approvals "), "\(post.requestLine)")
        #expect(post.header("Title") == "Termhost: approval 1 needed" && post.header("Priority") == "high"
                && post.header("Click") == "https://example.test/approvals", "\(post.headers)")
        #expect(post.body.contains("ssh_exec on host web1") && post.body.contains("termhost approvals allow 1"), "\(post.body)")
        #expect(!post.body.contains("touch") && !post.body.contains(first), "no command text unless details: \(post.body)")

        // Another client answers; the call runs on the server and the run finishes.
        let allowed = try ssh.termhost(["approvals", "allow", "1"])
        #expect(allowed.status == 0 && allowed.stdout.contains("approval 1: allowed"), "\(allowed.output)")
        #expect(Wait.until(timeout: 60) { Files.exists(first) }, "the approved command ran: \(dir.hostLog)")
        #expect(Wait.until(timeout: 60) { (try? ssh.termhost(["assistant", "history"]).stdout.contains("finished")) == true })
        let again = try ssh.termhost(["approvals", "allow", "1"])
        #expect(again.status == 1 && again.stderr.contains("no approval 1 is waiting"), "\(again.output)")

        // A second run's Ask nobody answers is refused after 3 s, and nothing runs.
        #expect(try ssh.termhost(["ask", "--background", "--acting", "--host", "web1", "make the second marker"]).status == 0)
        #expect(Wait.until(timeout: 60) { Self.pending(ssh).first?["id"] as? Int == 2 }, "\(daemon.log)")
        #expect(Wait.until(timeout: 60) { Self.pending(ssh).isEmpty })
        #expect(Wait.until(timeout: 60) { (try? ssh.termhost(["assistant", "history"]).stdout.components(separatedBy: "finished").count) == 3 })
        #expect(!Files.exists(second))

        let audit = try ssh.termhost(["assistant", "audit"])
        #expect(audit.stdout.contains("approved by person: touch \(first)") && audit.stdout.contains("approved once by 'termhost approvals allow 1'"),
                "\(audit.output)")
        #expect(audit.stdout.contains("refused by policy: touch \(second)") && audit.stdout.contains("refused: nobody answered within 3 s (assistant.approvalTimeout)"),
                "\(audit.output)")
    }

    /// A waiting Ask shows in the sessions to its host: `sessions --json` counts it (state
    /// "waiting"), `sessions events` and an attached client get an "approval" event with its id
    /// and tool, never the command, and its answer ends it with "approval-decided". A session
    /// to another host hears nothing of it.
    @Test func aWaitingAskAppearsInTheEventsOfSessionsToItsHost() throws {
        let setup = try DaemonSetup("termhost-approval-events", plugins: ["libAssistantPlugin.so": "org.termhost.assistant"])
        defer { setup.stop() }
        let (dir, ssh, daemon) = (setup.dir, setup.ssh, setup.daemon)
        let marker = dir.path + "/event-marker"
        let model = ScriptedHTTPServer(script: [Self.exec("touch \(marker)"), Self.text("done")])
        defer { model.stop() }
        #expect(try ssh.termhost(["hosts", "add", "web1", "127.0.0.1", "--port", "\(ssh.server.port)", "--user", NSUserName()]).status == 0)
        #expect(try ssh.termhost(["assistant", "provider", "add", "scripted", "--kind", "openai-compatible", "--model", "m",
                                  "--url", model.baseURL]).status == 0)
        func open(_ host: String) throws -> String {
            let c = try RawClient(daemon.address)
            c.hello()
            _ = c.receive()
            let reply = c.request(#"{"op":"open","request":{"host":"\#(host)"}}"#)
            return try #require((reply["session"] as? [String: Any])?["id"] as? String, "\(reply) \(daemon.log)")
        }
        let onWeb1 = try open("web1"), elsewhere = try open(ssh.target)
        let client = try RawClient(daemon.address)
        client.hello()
        _ = client.receive()
        let attached = try PersistentSessionEndToEndTests.Attached(client, onWeb1)

        #expect(try ssh.termhost(["ask", "--background", "--acting", "--host", "web1", "make the marker"]).status == 0)
        #expect(Wait.until(timeout: 60) { attached.events.contains { $0.contains("\"kind\":\"approval\"") } }, "\(daemon.log)")
        let live = try #require(attached.events.first { $0.contains("\"kind\":\"approval\"") })
        #expect(live.contains("\"id\":1") && live.contains("\"tool\":\"ssh_exec\"") && !live.contains("touch"), "\(live)")
        let listed = try ssh.termhost(["sessions", "--json"]).stdout
        let sessions = (try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]]) ?? []
        let web1 = sessions.first { $0["id"] as? String == onWeb1 }, other = sessions.first { $0["id"] as? String == elsewhere }
        #expect(web1?["pendingApprovals"] as? Int == 1 && web1?["state"] as? String == "waiting", "\(listed)")
        #expect(other?["pendingApprovals"] as? Int == 0 && other?["state"] as? String != "waiting", "\(listed)")
        // A session opened while the Ask waits shows it from its start.
        let later = try open("web1")
        let seeded = try ssh.termhost(["sessions", "events", later, "--json"]).stdout
        #expect(seeded.contains("\"kind\":\"approval\"") && seeded.contains("\"id\":1"), "\(seeded)")

        #expect(try ssh.termhost(["approvals", "allow", "1"]).status == 0)
        #expect(Wait.until(timeout: 60) { Files.exists(marker) }, "\(dir.hostLog)")
        #expect(Wait.until(timeout: 30) { attached.events.contains { $0.contains("\"kind\":\"approval-decided\",\"id\":1,\"decision\":\"allowed\"") } },
                "\(attached.events)")
        let events = try ssh.termhost(["sessions", "events", onWeb1, "--json"]).stdout
        #expect(events.contains("\"kind\":\"approval\"") && events.contains("\"decision\":\"allowed\"") && !events.contains("touch"), "\(events)")
        let quiet = try ssh.termhost(["sessions", "events", elsewhere, "--json"]).stdout
        #expect(!quiet.contains("approval"), "\(quiet)")
        let after = try ssh.termhost(["sessions", "--json"]).stdout
        #expect(after.contains("\"pendingApprovals\":0") && !after.contains("\"pendingApprovals\":1"), "\(after)")
    }
}
