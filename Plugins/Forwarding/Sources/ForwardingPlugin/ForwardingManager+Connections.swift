import CTermhost
import Foundation
import TermhostSDK

/// Each host's one shared connection: opening it (watched for loss), handing it to the host's
/// rules, and recovering it on the backoff schedule (HostLink's design). [queue]
extension ForwardingManager {
    func connect(_ link: HostLink, interactive: Bool) {
        link.connecting = true
        link.retry = nil
        let generation = link.generation + 1
        let scene = interactive ? link.scene : 0
        let token = Unmanaged.passRetained(LossToken(manager: self, link: link, generation: generation))
        link.call { [self] in
            do {
                let c = try transport.open(link.host, scene: scene, shared: true)
                // Shutdown began meanwhile: close inside this call, which shutdown waits for.
                if isClosingDown {
                    c.close()
                    token.release()
                    return
                }
                do { try c.watch(onLost: LossToken.onLost, user: SSHTransport.CallbackData(raw: token.toOpaque())) } catch {
                    c.close()
                    throw error
                }
                queue.async { self.connected(link, c, token: token, generation: generation) }
            } catch {
                token.release()
                queue.async { self.connectFailed(link, error) }
            }
        }
    }

    func connected(_ link: HostLink, _ c: SSHTransport.Connection, token: Unmanaged<LossToken>, generation: Int) {
        link.connecting = false
        guard !shuttingDown, !expired, !link.rules.isEmpty, links[link.host] === link else {
            link.call { c.close(); token.release() }
            return
        }
        link.connection = c
        link.token = token
        link.generation = generation
        link.connectedAt = Date()
        link.setCurrent(c)
        if link.everConnected { report(link, "forward: \(VisibleText.of(link.host)): reconnected (attempt \(link.attempt))") }
        link.everConnected = true
        link.attempt = 0
        for r in link.rules where r.state.hasIntent { attach(r, to: link) }
        // Reset the schedule once this connection has proved stable.
        queue.asyncAfter(deadline: .now() + Backoff.stableAfter) { [weak link] in
            guard let link, link.generation == generation, link.connection != nil else { return }
            link.backoff.reset()
        }
    }

    func connectFailed(_ link: HostLink, _ error: Error) {
        link.connecting = false
        // Expired meanwhile: resume() reconnects in foreground; no retries in background.
        guard !shuttingDown, !expired, links[link.host] === link, !link.rules.isEmpty else { return }
        let failure = error as? PluginError
        let message = VisibleText.of(failure?.message ?? "\(error)")
        if !link.everConnected && !link.rules.contains(where: { $0.hasRun || $0.keepsTrying }) {
            // Nothing has run yet: no intent to keep, as ssh -N exits when it cannot connect.
            // Rules the daemon restored at its start keep trying instead: the network may not
            // be up yet (a boot), and nobody is there to start them again.
            for r in link.rules where r.state.hasIntent { fail(r, message) }
            return
        }
        // Refused host key or credentials (TERMHOST_ERR_DENIED): retrying without a change cannot help.
        if failure?.code == Int32(TERMHOST_ERR_DENIED) {
            report(link, "forward: \(VisibleText.of(link.host)): recovery ended: \(message)")
            for r in link.rules where r.state.hasIntent { fail(r, "recovery ended: \(message) ('termhost forward retry' starts it again)") }
            return
        }
        report(link, "forward: \(VisibleText.of(link.host)): attempt \(link.attempt) failed: \(message)")
        scheduleRetry(link)
    }

    /// A connection died (on_lost, via the queue). Its streams end with it; never replayed.
    func lost(_ link: HostLink, generation: Int, reason: String) {
        guard generation == link.generation, link.connection != nil, !shuttingDown else { return }
        if let since = link.connectedAt, Date().timeIntervalSince(since) >= Backoff.stableAfter { link.backoff.reset() }
        retire(link)
        report(link, "forward: \(VisibleText.of(link.host)): connection lost: \(VisibleText.of(reason))")
        scheduleRetry(link)
    }

    /// Closes the link's connection (its remote listeners go with it).
    func retire(_ link: HostLink) {
        guard let c = link.connection else { return }
        let token = link.token
        link.connection = nil
        link.token = nil
        link.setCurrent(nil)
        for r in link.rules { r.remotePort = nil }
        link.call {
            c.close()
            token?.release()
        }
    }

    func scheduleRetry(_ link: HostLink) {
        let delay = link.backoff.next()
        link.attempt += 1
        let next = Date().addingTimeInterval(delay)
        report(link, "forward: \(VisibleText.of(link.host)): reconnecting in \(Int(delay)) s (attempt \(link.attempt))")
        for r in link.rules where r.state.hasIntent { set(r, .reconnecting(attempt: link.attempt, next: next)) }
        let work = DispatchWorkItem { [weak self, weak link] in
            guard let self, let link, link.retry != nil else { return }
            self.connect(link, interactive: false)
        }
        link.retry = work
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }
}
