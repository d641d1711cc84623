import Foundation

/// "HOST:PATH" as scp and sftp write it: HOST is a saved host or user@host, IPv6 addresses in
/// brackets ("[::1]:/tmp"); an empty PATH is the login directory. -P PORT adds a port.
struct RemoteArgument: Equatable {
    var host: String
    var path: String

    init(host: String, path: String) {
        self.host = host
        self.path = path
    }

    init?(_ text: String, port: Int? = nil) {
        var hostPart: Substring, rest: Substring
        if let at = text.firstIndex(of: "["), let close = text.firstIndex(of: "]"), at < close {
            let after = text.index(after: close)
            guard after < text.endIndex, text[after] == ":" else { return nil }
            hostPart = text[..<after]
            rest = text[text.index(after: after)...]
        } else {
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return nil }
            hostPart = text[..<colon]
            rest = text[text.index(after: colon)...]
            // "./a:b" or "/x:y" are local names with a colon, as in scp.
            if hostPart.utf8.contains(0x2f) { return nil }
        }
        host = port.map { "\(hostPart):\($0)" } ?? String(hostPart)
        path = rest.isEmpty ? "." : String(rest)
    }
}

/// A local path made absolute against a working directory (the shell's lcd, or the process').
func absoluteLocal(_ path: String, in cwd: String = FileManager.default.currentDirectoryPath) -> String {
    let expanded = path == "~" || path.hasPrefix("~/") ? NSHomeDirectory() + path.dropFirst() : path
    let joined = expanded.utf8.first == 0x2f ? expanded : cwd.appendingPath(expanded)
    return URL(fileURLWithPath: joined).standardizedFileURL.path
}
