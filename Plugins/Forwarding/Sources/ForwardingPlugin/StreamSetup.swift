import Foundation
import Glibc

/// How a new stream gets going: a -L or -D client accepted here gets a direct-tcpip channel
/// (after the SOCKS handshake for -D); a -R connection accepted by the server gets a TCP
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
            _ = Socks5Handshake(fd: fd, reactor: reactor, onConnect: { [self] handshake, host, port in
                link.call { [self] in
                    do {
                        let channel = try transport.openDirect(c, host: host, port: port)
                        reactor.post { [self] in
                            handshake.finish(.succeeded)
                            pump(r, local: fd, remote: channel, initial: handshake.leftover)
                        }
                    } catch {
                        pluginHost.log(.warning, "\(r.label): SOCKS CONNECT to \(ForwardSpec.bracketed(host)):\(port) failed: \(error.message)")
                        reactor.post { handshake.finish(Socks5Handshake.reply(for: error.message)) }
                    }
                }
            }, onFail: { [pluginHost] reason in pluginHost.log(.info, "\(r.label): \(reason)") })
            return
        }
        let target = r.rule.targetHost ?? "localhost", port = r.rule.targetPort ?? 0
        link.call { [self] in
            do {
                let channel = try transport.openDirect(c, host: target, port: port)
                reactor.post { [self] in pump(r, local: fd, remote: channel) }
            } catch {
                pluginHost.log(.warning, "\(r.label): cannot open a channel to \(ForwardSpec.bracketed(target)):\(port): \(error.message)")
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
                pluginHost.log(.warning, "\(r.label): \(error.message)")
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
