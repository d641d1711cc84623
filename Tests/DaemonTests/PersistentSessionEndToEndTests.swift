import Foundation
import Glibc
import Synchronization
import Testing
import TermhostDaemon
import TestSupport

/// Persistent terminal sessions (ssh/sessions.h) through the daemon's protocol, against a real
/// sshd: the SSH plugin in the daemon owns the shell; clients attach, mirror, detach.
@Suite struct PersistentSessionEndToEndTests {
    /// An sshd, and a daemon in the same scratch home (its keys and known_hosts).
    final class Setup {
        let dir: TemporaryDirectory
        let ssh: SSHHarness
        let daemon: DaemonHarness

        init(dir: TemporaryDirectory = TemporaryDirectory("termhost-persist"), serverConfig: String = "") throws {
            self.dir = dir
            ssh = try SSHHarness(dir: dir, serverConfig: serverConfig)
            daemon = DaemonHarness(environment: ssh.environment)
            try daemon.start()
        }

        func close() {
            daemon.stop()
            daemon.remove()
            ssh.server.stop()
            dir.remove()
        }

        /// Opens a session over a fresh connection and returns its ID.
        func open(columns: Int = 80, rows: Int = 24, remoteTmux: Bool = false) throws -> String {
            let c = try client()
            let reply = c.request(#"{"op":"open","request":{"host":"\#(ssh.target)","columns":\#(columns),"rows":\#(rows),"remoteTmux":\#(remoteTmux)}}"#)
            guard let id = (reply["session"] as? [String: Any])?["id"] as? String else {
                throw Shell.Failure(description: "open failed: \(reply); daemon log: \(daemon.log)")
            }
            return id
        }

        func client() throws -> RawClient {
            let c = try RawClient(daemon.address)
            c.hello()
            _ = c.receive()   // welcome
            return c
        }

        func attach(_ id: String) throws -> Attached { try Attached(client(), id) }
    }

    /// One attached client: a thread reads its frames into `output`, `events` and `reason`.
    final class Attached: Sendable {
        let client: RawClient
        private struct Seen { var output: [UInt8] = []; var events: [String] = []; var reason: String? = nil; var ended = false }
        private let seen = Mutex(Seen())

        init(_ client: RawClient, _ id: String) throws {
            self.client = client
            client.send(.request, #"{"op":"attach","session":"\#(id)"}"#)
            guard let reply = client.receiveText(), reply.contains("\"attached\"") else {
                throw Shell.Failure(description: "attach refused")
            }
            let thread = Thread { [self] in
                while let frame = client.receive() {
                    seen.withLock { s in
                        switch DaemonMessage(rawValue: frame.type) {
                        case .output?: s.output += frame.payload
                        case .event?: s.events.append(String(decoding: frame.payload, as: UTF8.self))
                        case .detached?: s.reason = String(decoding: frame.payload, as: UTF8.self)
                        default: break
                        }
                    }
                }
                seen.withLock { $0.ended = true }
            }
            thread.start()
        }

        var output: [UInt8] { seen.withLock { $0.output } }
        var text: String { String(decoding: output, as: UTF8.self) }
        var events: [String] { seen.withLock { $0.events } }
        var reason: String? { seen.withLock { $0.reason } }
        var ended: Bool { seen.withLock { $0.ended } }

        func type(_ line: String) { client.send(.input, line + "\n") }
        func resize(_ columns: Int, _ rows: Int) { client.send(.resize, #"{"columns":\#(columns),"rows":\#(rows)}"#) }
        func detach() { client.send(DaemonFrame(type: DaemonMessage.detach.rawValue, payload: []).encoded()) }

        @discardableResult
        func waitFor(_ text: String, timeout: Double = 60) -> Bool { Wait.until(timeout: timeout) { self.text.contains(text) } }
    }

    static let softReset: [UInt8] = [0x1B, 0x5B, 0x30, 0x6D]

    @Test func aClientAttachingMidStreamGetsEveryByteOnceAndAReattachReplaysTheRing() throws {
        let s = try Setup()
        defer { s.close() }
        let id = try s.open()
        let first = try s.attach(id)
        first.type("stty -echo; echo READY$((40+2))")
        #expect(first.waitFor("READY42"), "\(first.text)")
        // 40,000 numbered lines (about 230 KB) stream while a second client attaches.
        first.type("seq 1 40000; echo END$((40+2))")
        #expect(first.waitFor("\n20000"), "the stream is under way")
        let second = try s.attach(id)
        #expect(first.waitFor("END42"))
        #expect(second.waitFor("END42"))
        // Both saw the session from its start (the ring holds all of it), so after each one's
        // soft reset their bytes are the same: nothing missing, nothing twice.
        let a = first.output, b = second.output
        #expect(Array(a.prefix(4)) == Self.softReset && Array(b.prefix(4)) == Self.softReset)
        #expect(a.count > 200_000)
        #expect(Array(a.dropFirst(4)) == Array(b.dropFirst(4)), "first \(a.count) bytes, second \(b.count)")

        // Detached, then back: the replay is the ring, which is everything so far.
        second.detach()
        #expect(Wait.until(timeout: 30) { second.ended })
        #expect(second.reason?.contains("detached") == true, "\(second.reason ?? "no detached frame")")
        let third = try s.attach(id)
        #expect(Wait.until(timeout: 30) { third.output.count >= a.count })
        #expect(third.output == a)
        first.type("echo still-$((1+1))")
        #expect(third.waitFor("still-2"), "the session went on after a client detached")
    }

    @Test func aFullRingIsReplayedInFramesAClientTakes() throws {
        let s = try Setup()
        defer { s.close() }
        let id = try s.open()
        let filler = try s.attach(id)
        // 1.5 MB of output: more than the ring (1 MiB), which then holds its last 1 MiB.
        filler.type("stty -echo; head -c 1500000 /dev/zero | tr '\\0' x; echo; echo END$((40+2))")
        #expect(filler.waitFor("END42", timeout: 120))
        filler.detach()
        let late = try s.attach(id)
        let replay = (1 << 20) + Self.softReset.count
        #expect(Wait.until(timeout: 60) { late.output.count >= replay }, "\(late.output.count) bytes replayed")
        #expect(late.output.count == replay, "exactly the ring, after the soft reset")
        #expect(late.text.hasSuffix("END42\r\n") || late.text.contains("END42"), "the ring ends with the newest output")
        #expect(late.reason == nil, "still attached: \(late.reason ?? "")")
        late.type("echo after-$((2+2))")
        #expect(late.waitFor("after-4"), "live output follows the replay")
    }

    @Test func mirroredClientsTypeIntoOneShellAndTheLatestResizeWins() throws {
        let s = try Setup()
        defer { s.close() }
        let id = try s.open()
        let a = try s.attach(id), b = try s.attach(id)
        a.type("export MARK=from-a; echo set-$((2+3))")
        #expect(b.waitFor("set-5"), "\(b.text)")
        b.type("echo mark=$MARK-b")
        #expect(a.waitFor("mark=from-a-b"), "\(a.text)")
        #expect(b.waitFor("mark=from-a-b"))
        a.resize(100, 30)
        #expect(Wait.until(timeout: 30, poll: 0.2) { b.type("stty size"); return b.waitFor("30 100", timeout: 1) })
        b.resize(90, 20)
        #expect(Wait.until(timeout: 30, poll: 0.2) { a.type("stty size"); return a.waitFor("20 90", timeout: 1) })
        let listed = s.daemon.sessionsJSON()
        #expect(listed.contains(#""clients":2"#) && listed.contains(#""columns":90"#) && listed.contains(#""rows":20"#), "\(listed)")
        // Exit ends the session: each client gets the exit event and the reason, then is closed.
        a.type("exit 3")
        #expect(Wait.until(timeout: 30) { a.ended && b.ended })
        #expect(a.events.contains { $0.contains(#""kind":"exit""#) && $0.contains(#""status":3"#) }, "\(a.events)")
        #expect(b.reason?.contains("status 3") == true)
        #expect(s.daemon.sessionsJSON().contains(#""state":"ended""#))
    }

    @Test func killEndsTheSessionForEveryClientAndEventsTellItsStory() throws {
        let s = try Setup()
        defer { s.close() }
        let id = try s.open()
        let a = try s.attach(id)
        a.type("printf '\\033]2;build \\342\\200\\256gnp.exe\\007'; printf 'ding\\007\\n'")
        #expect(a.waitFor("ding"))
        let killed = try s.daemon.run("sessions", "kill", id)
        #expect(killed.status == 0, "\(killed.stderr)")
        #expect(Wait.until(timeout: 30) { a.ended })
        #expect(a.reason?.contains("killed") == true)
        let events = try s.daemon.run("sessions", "events", id, "--json").stdout
        for kind in ["opened", "attached", "title", "bell", "exit"] { #expect(events.contains(#""kind":"\#(kind)""#), "\(kind) in \(events)") }
        // The remote's title shows its right-to-left override as an escape, never raw.
        #expect(events.contains(#"build \\u{202e}gnp.exe"#), "\(events)")
        #expect(try s.daemon.run("sessions", "events", "nosuch").stderr.contains("no persistent session 'nosuch'"))
    }

    @Test func aClientThatNeverReadsIsDetachedWithoutSlowingTheOthers() throws {
        let s = try Setup()
        defer { s.close() }
        let id = try s.open()
        let reader = try s.attach(id)
        let stuck = try s.client()   // attaches, then never reads another byte
        stuck.send(.request, #"{"op":"attach","session":"\#(id)"}"#)
        reader.type("stty -echo; head -c 8000000 /dev/zero | tr '\\0' x; echo; echo END$((40+2))")
        #expect(reader.waitFor("END42", timeout: 120))
        #expect(Wait.until(timeout: 60) { s.daemon.log.contains("fell 4 MiB behind: detached") }, "\(s.daemon.log)")
        #expect(Wait.until(timeout: 60) { s.daemon.sessionsJSON().contains(#""clients":1"#) })
    }

    @Test func eachSessionIsASceneInBackgroundWhileNoClientIsAttached() throws {
        let s = try Setup()
        defer { s.close() }
        func status() -> String { (try? s.daemon.run("daemon", "status", "--json").stdout) ?? "" }
        #expect(status().contains(#""scenes":0"#), "\(status())")
        let id = try s.open()
        #expect(Wait.until(timeout: 30) { status().contains(#""scenes_in_background":1"#) && status().contains(#""scenes":1"#) }, "\(status())")
        let a = try s.attach(id)
        #expect(Wait.until(timeout: 30) { status().contains(#""scenes_in_background":0"#) }, "\(status())")
        a.detach()
        #expect(Wait.until(timeout: 30) { status().contains(#""scenes_in_background":1"#) }, "\(status())")
        // The daemon's own phase never follows them: its work goes on with no client attached.
        #expect(status().contains(#""phase":"active""#), "\(status())")
        #expect(try s.daemon.run("sessions", "kill", id).status == 0)
        #expect(Wait.until(timeout: 30) { status().contains(#""scenes":0"#) }, "killing it discards its scene: \(status())")
    }

    @Test func badRequestsAreRefusedWithTheirReasonAndTheDaemonGoesOn() throws {
        let s = try Setup()
        defer { s.close() }
        let c = try s.client()
        #expect((c.request(#"{"op":"attach","session":"abc123"}"#)["error"] as? String)?.contains("no persistent session 'abc123'") == true)
        #expect((c.request(#"{"op":"attach","session":"../x"}"#)["error"] as? String)?.contains("session ID") == true)
        let columns = c.request(#"{"op":"open","request":{"host":"\#(s.ssh.target)","columns":0}}"#)
        #expect((columns["error"] as? String)?.contains("columns must be a whole number from 1 to 10000") == true, "\(columns)")
        let host = c.request(#"{"op":"open","request":{"host":"nobody-saved-this.invalid"}}"#)
        #expect((host["error"] as? String)?.contains("Could not resolve hostname nobody-saved-this.invalid") == true, "\(host)")
        // The connection is still in request mode, and the daemon answers.
        #expect(c.request(#"{"op":"sessions"}"#)["sessions"] != nil)
    }
}

extension DaemonHarness {
    func sessionsJSON() -> String { (try? run("sessions", "--json").stdout) ?? "" }
}
