import CTermhost
import Foundation
import Glibc
import TermhostSDK

/// How a new stream gets going: a -L client accepted here is handed to the SSH plugin whole
/// (splice_direct_tcpip: it opens the channel and moves the bytes itself); a -D client gets a
/// direct-tcpip channel after the SOCKS handshake, bridged and pumped here, since its reply
/// must wait for the open's outcome; a -R connection accepted by the server gets a TCP
/// connection to the rule's target. Blocking steps run on the host link's queue or the
/// worker pool; the pump itself on the reactor.
extension ForwardingManager {
    /// A -L or -D listener accepted fd. [reactor]
    func localAccepted(_ r: RuleRuntime, fd: Int32) {
        guard let link = linkSnapshot(r), let c = link.current else {
            // No connection (reconnecting or paused): refuse rather than hold the client.
            Glibc.close(fd)
            return
        }
        if r.rule.kind == .dynamic {
            _ = Socks5Handshake(fd: fd, reactor: reactor, pending: r.pending, timeout: socksHandshakeSeconds, onConnect: { [self] handshake, host, port in
                link.call { [self] in
                    do {
                        let channel = try c.openDirectTCPIP(host: host, port: Int32(port))
                        reactor.post { [self] in
                            handshake.finish(.succeeded)
                            pump(r, local: fd, remote: channel, initial: handshake.leftover)
                        }
                    } catch {
                        // The name is the client's and the reason the server's: both shown, never obeyed.
                        pluginHost.log(.warning, "\(r.label): SOCKS CONNECT to \(VisibleText.of(ForwardSpec.bracketed(host))):\(port) failed: \(VisibleText.of(error.message))")
                        reactor.post { handshake.finish(Socks5Handshake.reply(for: error.message)) }
                    }
                }
            }, onFail: { [pluginHost] reason in
                // Clients cause these: a flood of them must not become a flood of log lines.
                if let line = r.handshakeLog.admit("\(r.label): \(VisibleText.of(reason))") { pluginHost.log(.info, line) }
            })
            return
        }
        let target = r.rule.targetHost ?? "localhost", port = r.rule.targetPort ?? 0
        // An SSH plugin without splice_direct_tcpip: a bridged channel, pumped here.
        guard transport.offersSplice else { return bridgeLocal(r, fd: fd, link: link, on: c, target: target, port: port) }
        guard r.state.hasIntent else { Glibc.close(fd); return }
        let context = Unmanaged.passRetained(SpliceContext(manager: self, runtime: r))
        do {
            let stream = try c.splice(host: target, port: Int32(port), fd: fd, onDone: SpliceContext.onDone,
                                      user: SSHTransport.CallbackData(raw: context.toOpaque()))
            // Read on this thread only, by spliceEnded's block, which runs after this one.
            context.takeUnretainedValue().stream = stream
            r.splices[stream] = c
            r.connections.add(1, ordering: .relaxed)
            queue.async { self.writeStatus() }
        } catch {
            context.release()   // on_done never comes after a refused call
            pluginHost.log(.warning, "\(r.label): cannot open a channel to \(VisibleText.of(ForwardSpec.bracketed(target))):\(port): \(VisibleText.of(error.message))")
        }
    }

    /// A spliced stream ended (on the connection's executor): out of the rule's books on the
    /// reactor. A stream that could not run, or was cut, says why in the log, unless this
    /// plugin ended it (a stopped rule, shutdown).
    func spliceEnded(_ s: SpliceContext, status: termhost_status, message: String) {
        reactor.post { [self] in
            let live = s.runtime.splices.removeValue(forKey: s.stream) != nil
            s.runtime.connections.subtract(1, ordering: .relaxed)
            if status != Int32(TERMHOST_OK) && live && !isClosingDown { pluginHost.log(.warning, "\(s.runtime.label): \(VisibleText.of(message))") }
            queue.async { self.writeStatus() }
        }
    }

    /// -L through a bridged channel and a pump, for an SSH plugin that cannot splice. [reactor]
    private func bridgeLocal(_ r: RuleRuntime, fd: Int32, link: HostLink, on c: SSHTransport.Connection, target: String, port: Int) {
        link.call { [self] in
            do {
                let channel = try c.openDirectTCPIP(host: target, port: Int32(port))
                reactor.post { [self] in pump(r, local: fd, remote: channel) }
            } catch {
                pluginHost.log(.warning, "\(r.label): cannot open a channel to \(VisibleText.of(ForwardSpec.bracketed(target))):\(port): \(VisibleText.of(error.message))")
                Glibc.close(fd)
            }
        }
    }

    /// The server accepted a connection on a -R listener; fd is the bridged channel. [executor]
    func remoteAccepted(_ r: RuleRuntime, fd: Int32) {
        let target = r.rule.targetHost ?? "localhost", port = r.rule.targetPort ?? 0
        workers.submit { [self] in
            do {
                let local = try TargetConnector.connect(host: target, port: port)
                reactor.post { [self] in pump(r, local: local, remote: fd) }
            } catch {
                pluginHost.log(.warning, "\(r.label): \(VisibleText.of(error.message))")
                Glibc.close(fd)
            }
        }
    }

    /// [reactor]
    func pump(_ r: RuleRuntime, local: Int32, remote: Int32, initial: [UInt8] = []) {
        guard r.state.hasIntent else { Glibc.close(local); Glibc.close(remote); return }
        var id: ObjectIdentifier?
        let p = Pump(reactor: reactor, local: local, remote: remote, initial: initial) { [weak self] in
            if let id { r.pumps[id] = nil }
            r.connections.subtract(1, ordering: .relaxed)
            guard let self else { return }
            self.queue.async { self.writeStatus() }
        }
        id = ObjectIdentifier(p)
        r.pumps[id!] = p
        r.connections.add(1, ordering: .relaxed)
        queue.async { self.writeStatus() }
    }

    func linkSnapshot(_ r: RuleRuntime) -> HostLink? {
        queue.sync { links[r.rule.host] }
    }
}

/// What a spliced -L stream's on_done gets as user data: retained for the call, released by it.
final class SpliceContext: @unchecked Sendable {
    weak var manager: ForwardingManager?
    let runtime: RuleRuntime
    /// Set on the reactor right after the splice call; read there only.
    var stream: UInt64 = 0

    init(manager: ForwardingManager, runtime: RuleRuntime) {
        self.manager = manager
        self.runtime = runtime
    }

    /// Runs once, on the connection's executor; must not call the transport service.
    static let onDone: SSHTransport.SpliceDoneCallback = { user, status, message in
        guard let user else { return }
        let context = Unmanaged<SpliceContext>.fromOpaque(user).takeRetainedValue()
        context.manager?.spliceEnded(context, status: status, message: message.map { String(cString: $0) } ?? "")
    }
}
