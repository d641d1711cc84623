import Foundation
import Glibc

/// `termhost hosts import`'s view of an OpenSSH client config: SSHConfigParser on the real
/// file system. Include paths are relative to ~/.ssh, `~` is $HOME, globs expand as OpenSSH's
/// do; every path is made canonical (realpath) so a loop through a symbolic link or `..` is
/// still seen as a loop. Files are read bounded: a FIFO, a device or /dev/zero is refused by
/// its type before a byte is read, and no file is read past the limit.
struct SSHConfigImport {
    let parsed: SSHConfigParser

    init(file: String) {
        parsed = SSHConfigParser(file: SSHConfigImport.canonical(file) ?? file,
                                 files: .init(expand: SSHConfigImport.expand, load: SSHConfigImport.load, localUser: SSHConnection.localUser()))
    }

    var records: [HostRecord] {
        parsed.hosts.map {
            HostRecord(name: $0.name, address: $0.address, port: $0.port, user: $0.user,
                       identityFile: $0.identityFile, tags: $0.template ? ["imported", "template"] : ["imported"], jump: $0.jump,
                       keepaliveInterval: $0.keepaliveInterval, keepaliveCountMax: $0.keepaliveCountMax,
                       forwardAgent: $0.forwardAgent ? true : nil,
                       sendEnv: $0.sendEnv.isEmpty ? nil : $0.sendEnv, setEnv: $0.setEnv.isEmpty ? nil : $0.setEnv,
                       certificateFile: $0.certificateFile, moreIdentityFiles: $0.moreIdentityFiles.isEmpty ? nil : $0.moreIdentityFiles,
                       hostKeyAlias: $0.hostKeyAlias)
        }
    }

    /// Per host, the keywords that applied to it and are not carried.
    var notCarried: [String: [String]] {
        Dictionary(parsed.hosts.map { ($0.name, $0.notCarried) }, uniquingKeysWith: { a, _ in a })
    }

    static func expand(_ argument: String) -> [String] {
        var path = argument
        var flags: Int32 = 0
        if path == "~" || path.hasPrefix("~/") {
            path = homeDirectory + path.dropFirst()
        } else if path.hasPrefix("~") {
            flags |= GLOB_TILDE   // ~user/...
        } else if !path.hasPrefix("/") {
            path = homeDirectory + "/.ssh/" + path
        }
        return glob(path, flags: flags).map { canonical($0) ?? $0 }
    }

    static func canonical(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// At most `limit` bytes of a regular file (one more when it is larger, to tell).
    static func load(_ path: String, limit: Int) -> SSHConfigParser.Loaded {
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .failed("cannot be read (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failed("cannot be read (\(String(cString: strerror(errno))))") }
        guard st.st_mode & S_IFMT == S_IFREG else { return .failed("is not a regular file") }
        if Int(st.st_size) > limit { return .tooLarge(Int(st.st_size)) }
        var bytes = [UInt8](repeating: 0, count: min(Int(st.st_size), limit) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .failed("cannot be read (\(String(cString: strerror(errno))))") }
            if n == 0 { break }
            count += n
            if count == bytes.count && count <= limit { bytes.append(contentsOf: repeatElement(0, count: min(limit + 1 - count, 1 << 16))) }
        }
        if count > limit { return .tooLarge(count) }
        return .bytes(Array(bytes[..<count]))
    }

    static func glob(_ pattern: String, flags: Int32 = 0) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard Glibc.glob(pattern, flags, nil, &g) == 0 else { return [] }
        return (0..<Int(g.gl_pathc)).compactMap { g.gl_pathv[$0].map { String(cString: $0) } }
    }
}
