import CLibSSH2
import LibSSH2
import Glibc
import TermhostSDK

/// `termhost ssh -W HOST:PORT SERVER`: stdin and stdout joined to HOST:PORT as the server sees
/// it (a direct-tcpip channel), as OpenSSH's `-W`: so termhost can be another client's
/// ProxyCommand (`ssh -o ProxyCommand='termhost ssh -W %h:%p bastion' inner`).
struct StdioForward {
    let connection: SSHConnection
    let host: String
    let port: Int

    /// HOST:PORT, [IPv6]:PORT: the host not empty, no control characters, not read as an
    /// option (a leading `-`), at most 255 bytes; the port 1-65535. nil otherwise.
    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil   // an IPv6 address without brackets: which colon ends it?
        }
        guard !host.isEmpty, host.utf8.count <= 255, host.utf8.first != UInt8(ascii: "-"), VisibleText.isPlain(host),
              !host.unicodeScalars.contains(where: { $0 == " " }) else { return nil }
        return (host, port)
    }

    /// Moves bytes until either side ends; 0 when the far end closed, 255 (with OpenSSH's
    /// words on stderr) when the server would not open the channel.
    func run(stdin: Int32, stdout: Int32, stderr: Int32) throws(SSHError) -> Int32 {
        let start = ReceiveWindow.now()
        guard let channel = libssh2_channel_direct_tcpip_ex(connection.session, host, Int32(port), "127.0.0.1", 0) else {
            throw SSHError("channel 0: open failed: \(connection.lastError())\nstdio forwarding failed")
        }
        defer { libssh2_channel_free(channel) }
        // The only channel of this connection: its open (including the server's own connect to
        // the target) is the round trip windows grow from, an upper bound.
        connection.noteRoundTrip(since: start)
        var pump = ChannelPump(connection: connection, channel: channel)
        pump.endsAtClose = false
        pump.growsWindow = true
        return try pump.run(stdin: stdin, stdout: stdout, stderr: stderr)
    }
}
