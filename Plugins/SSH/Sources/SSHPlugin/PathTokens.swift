import Glibc
import TermhostSDK

/// ssh_config's `%` tokens in IdentityFile and CertificateFile, expanded when connecting as
/// ssh expands them (ssh_config(5), TOKENS): stored as written, so `hosts show` shows the
/// config's own text and a changed user or port takes effect. `~/` is the user's home.
enum PathTokens {
    /// The path with its tokens expanded, or why it cannot be: a token termhost does not know
    /// (%C, %j, %k, %T) names itself rather than becoming a path nobody meant.
    static func expand(_ path: String, destination: Destination, remoteUser: String, home: String) -> Result<String, PathTokenError> {
        var out = path.hasPrefix("~/") ? home + "/" : ""
        var scalars = (path.hasPrefix("~/") ? String(path.dropFirst(2)) : path).unicodeScalars.makeIterator()
        while let c = scalars.next() {
            guard c == "%" else { out.unicodeScalars.append(c); continue }
            guard let token = scalars.next() else { return .failure(PathTokenError(path: path, token: "%")) }
            switch token {
            case "%": out += "%"
            case "d": out += home
            case "h": out += destination.address
            case "n": out += destination.name
            case "p": out += String(destination.port)
            case "r": out += remoteUser
            case "u": out += SSHConnection.localUser()
            case "i": out += String(getuid())
            case "l": out += hostName(short: false)
            case "L": out += hostName(short: true)
            default: return .failure(PathTokenError(path: path, token: "%" + String(token)))
            }
        }
        return .success(out)
    }

    private static func hostName(short: Bool) -> String {
        var buf = [UInt8](repeating: 0, count: 256)
        guard buf.withUnsafeMutableBufferPointer({ gethostname(UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 255) }) == 0 else { return "" }
        let name = String(decoding: buf.prefix { $0 != 0 }, as: UTF8.self)
        return short ? String(name.prefix { $0 != "." }) : name
    }
}

struct PathTokenError: Error {
    let path: String
    let token: String
    var message: String {
        "\(VisibleText.of(path)): the token \(VisibleText.of(token)) is not one termhost expands (%d %h %i %L %l %n %p %r %u %%); skipped"
    }
}
