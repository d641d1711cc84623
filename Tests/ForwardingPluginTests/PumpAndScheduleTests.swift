import Foundation
import Glibc
import Testing
import TestSupport
@testable import ForwardingPlugin

/// The data path and the recovery schedule on their own, with real sockets and the real
/// reactor thread (no SSH: the "remote" side is a socketpair standing in for the bridge).
@Suite struct PumpAndScheduleTests {
    typealias PumpState = (toLocal: Int, toRemote: Int, localPaused: Bool, remotePaused: Bool)

    /// Reads the pump's state on the reactor thread.
    func state(_ reactor: Reactor, _ holder: Holder) -> PumpState {
        final class Box: @unchecked Sendable { var value: PumpState?; let done = DispatchSemaphore(value: 0) }
        let box = Box()
        reactor.post { box.value = holder.pump!.state; box.done.signal() }
        box.done.wait()
        return box.value!
    }

    final class Holder: @unchecked Sendable { var pump: Pump?; let closed = DispatchSemaphore(value: 0) }

    func pair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        return (fds[0], fds[1])
    }

    @Test func aSlowReaderPausesTheOtherSideAt2MiBAndResumesBelow1MiBWithoutLosingAByte() throws {
        let reactor = Reactor()
        let (client, pumpLocal) = pair()      // the accepted TCP connection
        let (pumpRemote, server) = pair()     // the bridged channel
        defer { close(client); close(server) }
        let holder = Holder()
        reactor.post {
            holder.pump = Pump(reactor: reactor, local: pumpLocal, remote: pumpRemote) { holder.closed.signal() }
        }
        let total = 8 * 1024 * 1024
        let data = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        final class Progress: @unchecked Sendable { var written = 0; let lock = NSLock() }
        let progress = Progress()
        Thread {
            var off = 0
            while off < total {
                let n = data[off..<min(off + 65536, total)].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                off += n
                progress.lock.lock(); progress.written = off; progress.lock.unlock()
            }
            shutdown(client, Int32(SHUT_WR))
        }.start()
        // Nobody reads the server side: the pump must stop reading the client at 2 MiB.
        Wait.until { state(reactor, holder).toRemote >= Pump.pauseAt }
        let paused = state(reactor, holder)
        #expect(paused.localPaused)
        #expect(paused.toRemote >= Pump.pauseAt)
        #expect(paused.toRemote < Pump.pauseAt + Pump.chunk)
        progress.lock.lock(); let stuckAt = progress.written; progress.lock.unlock()
        #expect(stuckAt < total)
        // Drain a little: still above 1 MiB queued, so still paused.
        var received: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        func take(_ limit: Int) {
            while received.count < limit {
                let n = recv(server, &buf, min(buf.count, limit - received.count), 0)
                if n <= 0 { return }
                received += buf[0..<n]
            }
        }
        take(512 * 1024)
        // The pump has acted on the room the reader made: it wrote more of its queue.
        #expect(Wait.until { state(reactor, holder).toRemote < paused.toRemote }, "the pump never wrote into the drained room")
        let still = state(reactor, holder)
        #expect(still.localPaused, "resumed at \(still.toRemote) bytes queued")
        // Read everything: it resumes, and the half-close arrives after the last byte.
        while true {
            let n = recv(server, &buf, buf.count, 0)
            if n <= 0 { break }
            received += buf[0..<n]
        }
        #expect(received.count == total)
        #expect(received == data, "bytes differ")
    }

    @Test func recoveryWaits1_2_5_10ThenEvery30Seconds() {
        var b = Backoff()
        #expect((0..<7).map { _ in b.next() } == [1, 2, 5, 10, 30, 30, 30])
        b.reset()
        #expect(b.next() == 1)
        #expect(Backoff.stableAfter == 60)
    }

    @Test func specsParseLikeSSH() throws {
        #expect(try ForwardSpec.parse(.local, "8080:localhost:80") == .init(bindAddress: nil, bindPort: 8080, targetHost: "localhost", targetPort: 80))
        #expect(try ForwardSpec.parse(.local, "[::1]:8080:[fe80::1]:80") == .init(bindAddress: "::1", bindPort: 8080, targetHost: "fe80::1", targetPort: 80))
        #expect(try ForwardSpec.parse(.dynamic, "*:1080") == .init(bindAddress: "*", bindPort: 1080))
        #expect(throws: ForwardError.self) { try ForwardSpec.parse(.remote, "80:host:0") }
        let rule = ForwardRule(id: "x", name: "n", host: "h", kind: .remote, bindAddress: nil, bindPort: 0, targetHost: "::1", targetPort: 22)
        #expect(rule.sshArgument == "-R 0:[::1]:22")
        #expect(rule.remoteBindHost == "localhost")
        #expect(ForwardRule.defaultName(host: "prod", kind: .local, bindAddress: nil, bindPort: 8080) == "prod (-L 8080)")
    }

    @Test func socksRepliesFollowTheServersReason() {
        #expect(Socks5Handshake.reply(for: "Channel open failure (administratively prohibited)") == .notAllowed)
        #expect(Socks5Handshake.reply(for: "Channel open failure (connect failed)") == .connectionRefused)
        #expect(Socks5Handshake.reply(for: "ssh: connection to h port 22 lost: ...") == .generalFailure)
    }
}
