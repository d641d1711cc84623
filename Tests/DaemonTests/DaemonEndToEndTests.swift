import Foundation
import Glibc
import TermhostDaemon
import Testing
import TestSupport

/// `termhost daemon` as a user and a hostile local client meet it (Docs/Daemon.md): one daemon
/// per user, status and stop over its socket, a socket only its user reaches, and clients that
/// send garbage, too much, half a frame or never read, each ended alone while the daemon goes on.
@Suite struct DaemonEndToEndTests {
    @Test func aDaemonAnswersStatusRefusesASecondAndStopsRemovingItsSocket() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try daemon.start()
        let status = try daemon.run("daemon", "status", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.output)")
        #expect(object["running"] as? Bool == true && object["pid"] as? Int == Int(daemon.pid) && object["protocol"] as? Int == 1, "\(object)")
        #expect(object["socket"] as? String == daemon.address.socket)

        // The socket and its directory are the user's alone.
        var st = stat()
        #expect(lstat(daemon.address.directory, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(lstat(daemon.address.socket, &st) == 0 && st.st_mode & 0o777 == 0o600)

        let second = try daemon.run("daemon")
        #expect(second.status == 3 && second.stderr.contains("a daemon is already running (pid \(daemon.pid))"), "\(second.output)")

        // The terminal it came from closing does not end it.
        kill(daemon.pid, SIGHUP)
        #expect(Wait.until(timeout: 120) { daemon.log.contains("SIGHUP ignored") })
        #expect(try daemon.run("daemon", "status").status == 0)

        let stop = try daemon.run("daemon", "stop")
        #expect(stop.status == 0, "\(stop.output)")
        #expect(Wait.until(timeout: 120) { daemon.ended })
        #expect(access(daemon.address.socket, F_OK) != 0, "the socket was left behind")
        #expect(daemon.log.contains("stopped"), "\(daemon.log)")
        let after = try daemon.run("daemon", "status")
        #expect(after.status == 1 && after.stderr.contains("no daemon is running"), "\(after.output)")
    }

    /// kill -9 leaves the socket and the lock file; the lock died with the process, so the next
    /// daemon replaces the stale socket instead of refusing or reusing it.
    @Test func aDaemonKilledWithSIGKILLIsReplacedByTheNextStart() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try daemon.start()
        let first = daemon.pid
        kill(first, SIGKILL)
        #expect(Wait.until(timeout: 120) { daemon.ended })
        #expect(access(daemon.address.socket, F_OK) == 0, "a killed daemon cannot remove its socket")
        let stale = try daemon.run("daemon", "status")
        #expect(stale.status == 1 && stale.stderr.contains("no daemon is running"), "\(stale.output)")
        try daemon.start()
        #expect(daemon.pid != first)
        #expect(try daemon.run("daemon", "stop").status == 0)
    }

    @Test func malformedOversizedTruncatedAndForeignClientsEndOnlyThemselves() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try daemon.start()

        // A hello that is not JSON: refused, with the reason.
        let garbage = try RawClient(daemon.address)
        garbage.send(.hello, "hello")
        #expect(garbage.receive()?.type == DaemonMessage.refused.rawValue)
        #expect(garbage.receive() == nil)

        // A length over the limit: closed before any payload is read.
        let oversized = try RawClient(daemon.address)
        oversized.send([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1])
        #expect(oversized.receive() == nil)

        // Another protocol major: told both numbers.
        let newer = try RawClient(daemon.address)
        newer.send(.hello, #"{"protocol":2,"client":"termhost 9"}"#)
        let refusal = newer.receiveText() ?? ""
        #expect(refusal.contains("this daemon speaks protocol 1 and the client 2"), "\(refusal)")

        // A request before the hello, and half a frame then the end.
        let early = try RawClient(daemon.address)
        early.send(.request, #"{"op":"status"}"#)
        #expect(early.receiveText()?.contains("the first frame must be a hello") == true)
        do {
            let truncated = try RawClient(daemon.address)
            truncated.hello()
            _ = truncated.receive()
            truncated.send(Array(DaemonFrame(type: 16, payload: Array(#"{"op":"status"}"#.utf8)).encoded().prefix(11)))
        }

        // A well-formed client: an unknown operation is answered, and so is the next request.
        let good = try RawClient(daemon.address)
        good.hello()
        #expect(good.receive()?.type == DaemonMessage.welcome.rawValue)
        good.send(.request, #"{"op":"reboot\u001b[2J"}"#)
        let unknown = good.receiveText() ?? ""
        #expect(unknown.contains("unknown operation 'reboot\\\\033[2J'") && unknown.contains("status, stop"), "\(unknown)")
        good.send(.request, #"{"op":"status"}"#)
        #expect(good.receiveText()?.contains("\"pid\"") == true)

        #expect(Wait.until(timeout: 120) { daemon.log.contains("the connection ended inside a frame (truncated)") }, "\(daemon.log)")
        let log = daemon.log
        #expect(log.contains("malformed: a frame of 2147483647 bytes, over the limit of 1048576: closed"), "\(log)")
        #expect(!log.contains("\u{1b}"), "a client's escape reached the log")
        #expect(try daemon.run("daemon", "status").status == 0)
    }

    /// A client that sends requests and never reads the replies fills its socket; the daemon's
    /// write to it times out (DaemonConnection.writeTimeout, 5 s) and it is detached, while
    /// another client is answered all along.
    @Test func aClientThatNeverReadsIsDetachedAndOthersAreServed() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try daemon.start()
        let silent = try RawClient(daemon.address)
        silent.hello()
        let request = DaemonFrame(type: DaemonMessage.request.rawValue, payload: Array(#"{"op":"status"}"#.utf8)).encoded()
        let burst = Array((0..<2_000).map { _ in request }.joined())
        let writer = Thread {
            // Until the daemon stops reading (its replies are stuck) and then closes it.
            for _ in 0..<200 { silent.send(burst) }
        }
        writer.start()
        #expect(Wait.until(timeout: 120) { daemon.log.contains("did not read what the daemon sent within 5 s: detached") }, "\(daemon.log)")
        #expect(try daemon.run("daemon", "status").status == 0)
    }

    /// Another user (a real one, made with useradd) reaching the socket (its directory opened
    /// up for the test) is refused by the kernel's word on who it is, not by anything it says.
    @Test(.enabled(if: TestUser.available, "making a user and switching to it needs root; CI runs as root"))
    func anotherUserIsRefusedByItsCredentials() throws {
        let user = try TestUser(tag: "daemon")
        defer { user.remove() }
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try daemon.start()
        // Only the test's own directories (up to its scratch root, never /tmp itself).
        var path = daemon.address.directory
        while path.hasPrefix(daemon.dir.path) {
            chmod(path, 0o711)
            path = (path as NSString).deletingLastPathComponent
        }
        chmod(daemon.address.socket, 0o666)
        let script = """
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.connect(\(String(reflecting: daemon.address.socket)))
        # The daemon answers at once, before any hello: it knows who connected from the kernel.
        print(s.recv(65536)[8:].decode())
        """
        let intruder = try user.run("/usr/bin/python3", ["-c", script], environment: ["PATH": "/usr/bin:/bin"])
        #expect(intruder.stdout.contains("this daemon serves only uid 0, its own"), "\(intruder.status) \(intruder.output)")
        #expect(daemon.log.contains("refused a client of uid \(user.uid)"), "\(daemon.log)")
        #expect(try daemon.run("daemon", "status").status == 0)
    }
}
