import Glibc
import TermhostSDK

/// The SOCKS server side of a -D rule, on the reactor: SOCKS5 (RFC 1928) with the "no
/// authentication" method and the CONNECT command to an IPv4 address, an IPv6 address or a
/// domain name, and SOCKS4 and 4a (CONNECT to an IPv4 address or a name), as OpenSSH's -D. The
/// client's first byte says which. A name is sent to the server as is (direct-tcpip), so DNS
/// happens there and never blocks this plugin. Replies use each version's codes. The bytes are
/// parsed by `Socks5Parser` and `Socks4Parser`.
///
/// Bounds (Docs/Forwarding.md, "Limits"): a client has `SocksLimits.handshakeSeconds` from
/// its connection to a complete request, and a rule holds at most `SocksLimits.pendingPerRule`
/// clients that have not finished theirs (`PendingHandshakes`): idle connections cannot hold
/// descriptors for ever, nor crowd out a real client.
final class Socks5Handshake: ReactorHandler, @unchecked Sendable {
    typealias Reply = Socks5Parser.Reply

    private let fd: Int32
    private let reactor: Reactor
    private let pending: PendingHandshakes
    private var buffer: [UInt8] = []
    private var greeted = false
    /// The client's SOCKS version (4 or 5), once its first byte arrived.
    private var version: UInt8?
    private var done = false
    private var timer: Int?
    /// Called with the target once the request is complete; the handshake is then off the
    /// reactor until `finish` is called.
    private let onConnect: (Socks5Handshake, String, Int) -> Void
    private let onFail: (String) -> Void

    init(fd: Int32, reactor: Reactor, pending: PendingHandshakes, timeout: Double,
         onConnect: @escaping (Socks5Handshake, String, Int) -> Void, onFail: @escaping (String) -> Void) {
        self.fd = fd
        self.reactor = reactor
        self.pending = pending
        self.onConnect = onConnect
        self.onFail = onFail
        reactor.add(fd, self)
        timer = reactor.after(timeout) { [weak self] in
            self?.fail(nil, "closed a SOCKS client that sent no complete request within \(SocksLimits.text(timeout)) s")
        }
        // Over the cap, the oldest waiting client goes: a flood of idle connections then
        // never keeps out the real client that arrives after it.
        if let oldest = pending.add(self) {
            oldest.fail(nil, "closed the oldest of \(SocksLimits.pendingPerRule) SOCKS clients still in their handshake (the limit)")
        }
    }

    func interest(_ fd: Int32) -> Int16 { done ? 0 : Int16(POLLIN) }

    func ready(_ fd: Int32, _ revents: Int16) {
        var chunk = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 {
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
            return fail(nil, "the client closed the connection during the SOCKS handshake")
        }
        buffer += chunk[0..<n]
        if version == nil, let first = buffer.first { version = first == 4 ? 4 : 5 }
        if version == 4 {
            // SOCKS4 has no greeting: the request comes at once.
            request(Socks4Parser.request(buffer[...]))
        } else {
            if !greeted { greet() }
            if greeted && !done { request(Socks5Parser.request(buffer[...])) }
        }
        // A client that sends more than any message can hold before its request is complete
        // is not speaking SOCKS.
        let most = version == 4 ? Socks4Parser.maxMessage : Socks5Parser.maxMessage
        if !done && buffer.count > most { fail(.generalFailure, "the SOCKS client sent more than a request holds") }
    }

    private func greet() {
        switch Socks5Parser.greeting(buffer[...]) {
        case .incomplete: return
        case .invalid(let reason): fail(nil, reason)
        case .complete(let consumed, let noAuth):
            buffer.removeFirst(consumed)
            guard noAuth else {
                write([5, 0xFF])
                return fail(nil, "the SOCKS client offers no method this forward accepts (only 'no authentication')")
            }
            write([5, 0])
            greeted = true
        }
    }

    private func request(_ parsed: Socks5Parser.Request) {
        switch parsed {
        case .incomplete: return
        case .invalid(let reason): fail(.generalFailure, reason)
        case .refused(let reply, let reason, _): fail(reply, reason)
        case .connect(let address, let port, let consumed):
            buffer.removeFirst(consumed)
            let host: String
            switch address {
            case .ipv4(let a): host = Socks5Handshake.numeric(a, family: AF_INET)
            case .ipv6(let a): host = Socks5Handshake.numeric(a, family: AF_INET6)
            case .domain(let name): host = String(decoding: name, as: UTF8.self)
            }
            done = true
            leaveWaiting()
            onConnect(self, host, port)
        }
    }

    private static func numeric(_ address: [UInt8], family: Int32) -> String {
        var text = [CChar](repeating: 0, count: 64)
        _ = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, 64) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The client's part is over (or the handshake ended): no deadline, off the rule's list.
    private func leaveWaiting() {
        if let timer { reactor.cancelTimer(timer) }
        timer = nil
        pending.remove(self)
    }

    /// Bytes the client sent after its request: the start of the stream.
    var leftover: [UInt8] { buffer }

    /// Replies success and hands the socket over (the caller builds the pump), or replies the
    /// failure and closes. [reactor]
    func finish(_ reply: Reply) {
        reactor.remove(fd)
        write(Socks5Handshake.reply(reply, version: version ?? 5))
        if reply != .succeeded { Glibc.close(fd) }
    }

    /// The reply bytes: SOCKS5's with its code; SOCKS4's with 90 (granted) or 91 (any failure:
    /// SOCKS4 has no finer code).
    static func reply(_ reply: Reply, version: UInt8) -> [UInt8] {
        version == 4 ? [0, reply == .succeeded ? Socks4Parser.granted : Socks4Parser.rejected, 0, 0, 0, 0, 0, 0]
            : [5, reply.rawValue, 0, 1, 0, 0, 0, 0, 0, 0]
    }

    /// Ends the handshake now, without a reply (its rule stopped). [reactor]
    func cancel() {
        guard !done else { return }
        done = true
        leaveWaiting()
        reactor.remove(fd)
        Glibc.close(fd)
    }

    private func fail(_ reply: Reply?, _ reason: String) {
        guard !done else { return }
        if let reply { write(Socks5Handshake.reply(reply, version: version ?? 5)) }
        done = true
        leaveWaiting()
        reactor.remove(fd)
        Glibc.close(fd)
        onFail(reason)
    }

    /// Replies are a few bytes on a fresh socket: the send buffer takes them at once.
    private func write(_ bytes: [UInt8]) { _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }

    /// The reply for a failed channel open, from the server's reason (RFC 4254 §5.1 codes as
    /// libssh2 words them).
    static func reply(for message: String) -> Reply {
        if message.contains("prohibited") { return .notAllowed }
        if message.contains("connect failed") { return .connectionRefused }
        return .generalFailure
    }
}

/// One -D rule's clients still in their handshake, oldest first. [reactor]
final class PendingHandshakes {
    private var list: [Socks5Handshake] = []

    var count: Int { list.count }

    /// Adds h; returns the oldest one when that puts the list over the cap.
    func add(_ h: Socks5Handshake) -> Socks5Handshake? {
        list.append(h)
        return list.count > SocksLimits.pendingPerRule ? list.first : nil
    }

    func remove(_ h: Socks5Handshake) { list.removeAll { $0 === h } }

    /// Closes them all (the rule stopped).
    func cancelAll() {
        let all = list
        list = []
        for h in all { h.cancel() }
    }
}

/// The SOCKS handshake bounds, and the variable tests use to shorten the deadline.
enum SocksLimits {
    /// As long as OpenSSH gives a client to log in, give or take: ample for any real client on
    /// any network, short enough that idle connections do not pile up.
    static let defaultHandshakeSeconds = 10.0
    /// Clients of one rule that may be in their handshake at once (a browser opens a few
    /// dozen connections at most).
    static let pendingPerRule = 64
    static let variable = "TERMHOST_SOCKS_HANDSHAKE_TIMEOUT"

    /// The deadline from the environment (0.1 to 600 s), or the default.
    static func handshakeSeconds(_ env: [String: String]) throws(NumberOutOfRange) -> Double {
        guard let text = env[variable] else { return defaultHandshakeSeconds }
        return try BoundedNumber.decimal(text, name: variable, in: 0.1...600, unit: "seconds")
    }

    static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// At most one line a second; the next line admitted says how many were left out. [reactor]
final class LogThrottle {
    private var last = -Double.infinity
    private var skipped = 0

    func admit(_ line: String) -> String? {
        let now = Reactor.now()
        guard now - last >= 1 else { skipped += 1; return nil }
        last = now
        defer { skipped = 0 }
        return skipped == 0 ? line : line + " (and \(skipped) more since the last such line)"
    }
}
