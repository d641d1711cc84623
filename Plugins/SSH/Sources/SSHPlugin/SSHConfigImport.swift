import Foundation

/// Reads OpenSSH client configuration (`~/.ssh/config`) into host records, for
/// `termhost hosts import`. Understood: Host, HostName, User, Port, IdentityFile, ProxyJump,
/// Include (with globs, relative to ~/.ssh). Everything else is reported, never executed:
/// ProxyCommand, LocalCommand and `Match exec` run programs, and an import must not.
/// OpenSSH's rule applies: for each keyword the first value that matches a host wins, so a
/// `Host *` block at the end supplies defaults.
struct SSHConfigImport {
    struct Block {
        var patterns: [String]
        var values: [(key: String, value: String, file: String, line: Int)] = []
    }

    private(set) var blocks: [Block] = []
    private(set) var notes: [String] = []
    private var included = Set<String>()

    static let understood: Set<String> = ["host", "hostname", "user", "port", "identityfile", "proxyjump", "include"]

    init(file: String) { read(file, depth: 0) }

    private mutating func read(_ file: String, depth: Int) {
        guard depth < 16, included.insert(file).inserted else { return }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            notes.append("\(file): cannot be read; skipped")
            return
        }
        if blocks.isEmpty { blocks.append(Block(patterns: ["*"])) }   // lines before any Host apply to all
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" || $0 == "=" })
            let key = parts[0].lowercased()
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t=\"")) : ""
            let at = "\(file):\(index + 1)"
            switch key {
            case "host":
                blocks.append(Block(patterns: value.split(separator: " ").map(String.init)))
            case "match":
                notes.append("\(at): Match blocks are not imported (\(value.contains("exec") ? "Match exec would run a program" : "conditions cannot be evaluated offline")); its lines are skipped")
                blocks.append(Block(patterns: []))   // matches nothing
            case "include":
                for pattern in value.split(separator: " ") {
                    let path = pattern.hasPrefix("/") ? String(pattern) : pattern.hasPrefix("~")
                        ? (String(pattern) as NSString).expandingTildeInPath.replacingOccurrences(of: NSHomeDirectory(), with: homeDirectory)
                        : homeDirectory + "/.ssh/" + pattern
                    for match in SSHConfigImport.glob(path) { read(match, depth: depth + 1) }
                }
            case _ where SSHConfigImport.understood.contains(key):
                blocks[blocks.count - 1].values.append((key, value, file, index + 1))
            case "proxycommand", "localcommand", "permitlocalcommand":
                notes.append("\(at): \(parts[0]) is never executed by termhost; not imported")
            default:
                notes.append("\(at): \(parts[0]) is not supported; not imported")
            }
        }
    }

    /// Concrete host aliases (no wildcard or negation), in file order, with their effective
    /// settings.
    var records: [HostRecord] {
        var names: [String] = []
        for block in blocks {
            for p in block.patterns where !p.contains("*") && !p.contains("?") && !p.hasPrefix("!") && !names.contains(p) {
                names.append(p)
            }
        }
        return names.map { name in
            var values: [String: String] = [:]
            for block in blocks where KnownHosts.matches(block.patterns.joined(separator: ","), [name]) {
                for v in block.values where values[v.key] == nil { values[v.key] = v.value }
            }
            return HostRecord(name: name, address: values["hostname"].map { $0.replacingOccurrences(of: "%h", with: name) } ?? name,
                              port: values["port"].flatMap(Int.init) ?? 22, user: values["user"],
                              identityFile: values["identityfile"], tags: ["imported"],
                              jump: values["proxyjump"].flatMap { $0 == "none" ? nil : $0.split(separator: ",").map(String.init) })
        }
    }

    static func glob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard Glibc.glob(pattern, 0, nil, &g) == 0 else { return [] }
        return (0..<Int(g.gl_pathc)).compactMap { g.gl_pathv[$0].map { String(cString: $0) } }
    }
}

import Glibc
