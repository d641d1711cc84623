import CLibSSH2
import LibSSH2
import Foundation
import Glibc
import TermhostSDK

/// ProxyJump: reaching a host through up to 8 jump hosts. The route is worked out, and a cycle
/// or an overlong route refused, before any connection is made. Every hop is a full
/// connection: its host key verified and its user authenticated like any other.
enum JumpRoute {
    static let maximumHops = 8

    /// The hops before `target`, outermost first. A saved jump host's own jump route comes
    /// before it (as OpenSSH's ProxyJump does).
    static func hops(to target: Destination, extra: [String], vault: Vault) throws(SSHError) -> [Destination] {
        var route: [Destination] = []
        var visiting: [String] = [key(target)]
        func expand(_ names: [String]) throws(SSHError) {
            for name in names {
                let resolved: Destination?
                do { resolved = try vault.resolve(name) } catch { throw SSHError("ssh: jump host '\(VisibleText.of(name))': \(error)") }
                guard let hop = resolved else { throw SSHError("ssh: jump host '\(VisibleText.of(name))' is neither a saved host nor user@host[:port]") }
                let k = key(hop)
                if visiting.contains(k) || route.contains(where: { key($0) == k }) {
                    throw SSHError("ssh: jump route cycle: \(VisibleText.of((visiting + [k]).joined(separator: " -> "))); nothing was connected")
                }
                visiting.append(k)
                try expand(hop.jump ?? [])
                visiting.removeLast()
                route.append(hop)
                if route.count > maximumHops {
                    throw SSHError("ssh: the jump route to \(VisibleText.of(target.name)) has more than \(maximumHops) hosts; nothing was connected")
                }
            }
        }
        try expand(extra.isEmpty ? (target.jump ?? []) : extra)
        return route
    }

    static func key(_ d: Destination) -> String { "\(d.user ?? SSHConnection.localUser())@\(d.address):\(d.port)" }

    /// Connects hop by hop, each one through a direct-tcpip channel of the previous.
    static func connect(to target: Destination, through hops: [Destination], interaction: ConnectionPrompts) throws(SSHError) -> SSHConnection {
        var current: SSHConnection? = nil
        for next in hops + [target] {
            guard let outer = current else {
                current = try SSHConnection(to: next, interaction: interaction,
                                            timeoutSeconds: try SSHConnection.connectTimeout(interaction.host))
                continue
            }
            let tunnel = try JumpTunnel.open(through: outer, to: next)
            do {
                let inner = try SSHConnection(to: next, interaction: interaction, over: tunnel.innerSocket,
                                              timeoutSeconds: try SSHConnection.connectTimeout(interaction.host))
                inner.upstream = tunnel
                current = inner
            } catch {
                tunnel.close()
                throw error
            }
        }
        return current!
    }
}

/// A direct-tcpip channel on an outer connection, carried to a local socket pair so the inner
/// session gets a real descriptor to poll. A thread of its own pumps the channel: from then on
/// it is the outer session's only caller (its serial executor).
final class JumpTunnel: @unchecked Sendable {
    let outer: SSHConnection
    let innerSocket: Int32
    private let pumpSocket: Int32
    private let done = DispatchSemaphore(value: 0)

    private init(outer: SSHConnection, innerSocket: Int32, pumpSocket: Int32) {
        self.outer = outer
        self.innerSocket = innerSocket
        self.pumpSocket = pumpSocket
    }

    static func open(through outer: SSHConnection, to next: Destination) throws(SSHError) -> JumpTunnel {
        let start = ReceiveWindow.now()
        guard let channel = libssh2_channel_direct_tcpip_ex(outer.session, next.address, Int32(clamping: next.port), "127.0.0.1", 22) else {
            let reason = outer.lastError()
            outer.teardown()
            let hint = reason.contains("prohibited") ? " (the jump host does not allow TCP forwarding: AllowTcpForwarding)" : ""
            throw SSHError("ssh: jump host \(outer.shownAddress) cannot reach \(VisibleText.of(next.address)) port \(next.port): \(reason)\(hint)")
        }
        outer.noteRoundTrip(since: start)   // the hop's only channel: an upper bound of its round trip
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            libssh2_channel_free(channel)
            outer.teardown()
            throw SSHError("ssh: socketpair: \(String(cString: strerror(errno)))")
        }
        let tunnel = JumpTunnel(outer: outer, innerSocket: pair[0], pumpSocket: pair[1])
        // The outer session and channel are handed over to the pump thread, which is their only
        // user from here on.
        let work = HandOver(value: (outer: outer, channel: channel))
        let thread = Thread {
            var pump = ChannelPump(connection: work.value.outer, channel: work.value.channel)
            pump.endsAtClose = false
            pump.growsWindow = true   // the next hop's whole connection, bulk data included
            _ = try? pump.run(stdin: tunnel.pumpSocket, stdout: tunnel.pumpSocket, stderr: -1)
            libssh2_channel_free(work.value.channel)
            Glibc.close(tunnel.pumpSocket)
            tunnel.done.signal()
        }
        thread.name = "termhost-ssh-jump"
        thread.start()
        return tunnel
    }

    /// Called after the inner session closed its socket (it owns `innerSocket`, and closes it
    /// on every path, failed handshakes included; touching that number here could reach a
    /// descriptor opened since): the pump sees end-of-file, closes the channel and stops
    /// (bounded), then the outer connection goes.
    func close() {
        if done.wait(timeout: .now() + 3) == .timedOut {
            shutdown(pumpSocket, Int32(SHUT_RDWR))
        }
        outer.teardown()
    }
}
