import Glibc
#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText; the PathTokens fuzz target compiles it in instead
#endif

/// ssh_config's `%` tokens, `${VARIABLE}`s and `~` in IdentityFile and CertificateFile,
/// expanded when connecting as ssh expands them (ssh_config(5), TOKENS and ENVIRONMENT
/// VARIABLES): stored as written, so `hosts show` shows the config's own text and a changed
/// user or port takes effect. `~/` is the user's home, `~NAME/` NAME's; a variable is the
/// user's (in the daemon, the client's).
enum PathTokens {
    /// The path expanded, or why it cannot be: a token termhost does not know (%C, %j, %k, %T),
    /// an unset variable or an unknown user names itself rather than becoming a path nobody meant.
    static func expand(_ path: String, destination: Destination, remoteUser: String, localUser: String, home: String,
                       variable: (String) -> String?) -> Result<String, PathTokenError> {
        var rest = Substring(path)
        var out = ""
        if rest.hasPrefix("~") {
            let user = rest.dropFirst().prefix { $0 != "/" }
            if user.isEmpty {
                out = home
            } else {
                guard let entry = getpwnam(String(user)), let dir = entry.pointee.pw_dir else {
                    return .failure(PathTokenError(path: path, reason: "no user '\(VisibleText.of(String(user)))' on this machine"))
                }
                out = String(cString: dir)
            }
            rest = rest.dropFirst(1 + user.count)
        }
        var scalars = String(rest).unicodeScalars.makeIterator()
        while let c = scalars.next() {
            if c == "$" {
                var name = ""
                guard scalars.next() == "{" else { return .failure(PathTokenError(path: path, reason: "a '$' not followed by {NAME}")) }
                while let n = scalars.next(), n != "}" { name.unicodeScalars.append(n) }
                guard let value = variable(name) else {
                    return .failure(PathTokenError(path: path, reason: "the variable \(VisibleText.of(name)) is not set"))
                }
                out += value
                continue
            }
            guard c == "%" else { out.unicodeScalars.append(c); continue }
            guard let token = scalars.next() else { return .failure(PathTokenError(path: path, token: "%")) }
            switch token {
            case "%": out += "%"
            case "d": out += home
            case "h": out += destination.address
            case "n": out += destination.name
            case "p": out += String(destination.port)
            case "r": out += remoteUser
            case "u": out += localUser
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
    let reason: String

    var message: String { "\(VisibleText.of(path)): \(reason); skipped" }
}

extension PathTokenError {
    init(path: String, token: String) {
        self.init(path: path, reason: "the token \(VisibleText.of(token)) is not one termhost expands (%d %h %i %L %l %n %p %r %u %%)")
    }
}
