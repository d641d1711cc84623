import CCrashRecorder
import Foundation
import Glibc
import TermhostLoader
import TermhostRegistry
import TermhostSDK

/// The crash marker: `crash-marker` beside the probe cache ($XDG_CACHE_HOME/termhost/), mode
/// 0600, never opened through a symbolic link. Each host process opens it (O_APPEND) before any
/// plugin code runs and hands the descriptor to the fatal-signal recorder; a crash inside a
/// plugin call appends one line, written by the signal handler with a single write():
///
///     crash <signal>\t<call>\t<argument>\t<plugin ID>\t<sha256>\t<library path, %-escaped>
///
/// The next start reads the lines, empties the file and quarantines each file named, by its
/// path and hash, in the probe cache (see `CrashQuarantine`).
public enum CrashMarker {
    public struct Crash: Sendable, Equatable {
        public var signal: Int32
        public var call: String
        public var argument: String
        public var pluginID: String
        public var sha256: String
        public var library: String

        /// `activate("org.x.feature")`, `run_command("exec")`, `init()`; "a thread it started"
        /// for a fault in its code on a thread with no host call in it.
        public var callText: String {
            if call == "thread" { return "a thread it started" }
            return argument.isEmpty ? "\(call)()" : "\(call)(\"\(argument)\")"
        }
    }

    /// A marker larger than this is not read (each line is at most 16 KiB, one per crash).
    static let cap = 1 << 20

    /// `<directory of the probe cache>/crash-marker`, or nil when the host keeps no cache.
    public static func path(_ paths: HostPaths) -> String? {
        paths.probeCache.map { PathText.parent($0) + "/crash-marker" }
    }

    /// A library path may hold any byte but NUL; tab, newline, carriage return and % would break
    /// the line format, so each is written as % and two upper-case hex digits.
    static func escape(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            guard "%\t\n\r".unicodeScalars.contains(ch) else { out.unicodeScalars.append(ch); continue }
            let hex = String(ch.value, radix: 16, uppercase: true)
            out += (hex.count < 2 ? "%0" : "%") + hex
        }
        return out
    }

    static func unescape(_ s: Substring) -> String {
        s.replacingOccurrences(of: "%09", with: "\t").replacingOccurrences(of: "%0A", with: "\n")
            .replacingOccurrences(of: "%0D", with: "\r").replacingOccurrences(of: "%25", with: "%")
    }

    /// The well-formed lines of a marker; anything else (a line cut short by a full disk) is skipped.
    static func parse(_ text: String) -> [Crash] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("crash ") else { return nil }
            let fields = line.dropFirst(6).split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 6, let signal = Int32(fields[0]), (1...64).contains(signal),
                  (try? FeatureID(String(fields[3]))) != nil, !fields[4].isEmpty, fields[5].hasPrefix("/") else { return nil }
            return Crash(signal: signal, call: String(fields[1]), argument: String(fields[2]), pluginID: String(fields[3]),
                         sha256: String(fields[4]), library: unescape(fields[5]))
        }
    }

    /// Reads what earlier runs recorded and empties the marker. Refuses a marker that is not a
    /// regular file or not the user's own (another user could otherwise quarantine their plugins).
    public static func take(path: String) -> [Crash] {
        let fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0,
              PrivateFile.check(fd: fd, path: path, privateMode: 0o600, fix: "chmod 600 \(path)") == nil else { return [] }
        let data: Data
        do { data = try BoundedFile.read(fd: fd, file: path, cap: cap) } catch { _ = ftruncate(fd, 0); return [] }
        _ = ftruncate(fd, 0)
        return parse(String(decoding: data, as: UTF8.self))
    }

    /// Opens the marker for this process (0600, O_APPEND, O_NOFOLLOW) and installs the
    /// recorder's handler. Without a marker the handler is still installed: it then only
    /// passes crashes on, and the exit status is the same.
    public static func arm(path: String?) {
        var fd: Int32 = -1
        if let path {
            if PrivateFile.prepare(ownDirectory: PathText.parent(path)) == nil {
                fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            }
            var st = stat()
            if fd >= 0, fstat(fd, &st) != 0 || (st.st_mode & S_IFMT) != S_IFREG
                || PrivateFile.check(fd: fd, path: path, privateMode: 0o600, fix: "chmod 600 \(path)") != nil {
                close(fd)
                fd = -1
            }
        }
        _ = termhost_crash_recorder_install(fd)
    }
}

/// What the next start does with a crash the marker recorded.
public enum CrashQuarantine {
    /// Quarantines each file an earlier run crashed in (by path and sha256, in the probe cache)
    /// and returns one message per crash for stderr. Run before the plugins are inspected, so
    /// this start already goes on without them; then arms the marker for this run.
    public static func handlePreviousCrashes(_ paths: HostPaths) -> [String] {
        guard let marker = CrashMarker.path(paths), let cachePath = paths.probeCache else {
            CrashMarker.arm(path: nil)
            return []
        }
        let crashes = CrashMarker.take(path: marker)
        var messages: [String] = []
        if !crashes.isEmpty {
            var cache = ProbeCache.load(path: cachePath)
            for c in crashes {
                let signal = LoadFailure.signalName(c.signal)
                let what = "termhost: plugin '\(VisibleText.of(c.pluginID))' (\(VisibleText.of(c.library))) crashed the previous run with \(signal) in \(VisibleText.of(c.callText))"
                // Only the very file that crashed: one replaced since (a fix) is innocent until probed.
                if currentSHA256(c.library) == c.sha256,
                   cache.quarantine(library: c.library, sha256: c.sha256, failure: .crashedInHost(signal: c.signal, call: c.callText)) {
                    messages.append("\(what); quarantined until the library changes; 'termhost plugins quarantine clear \(c.pluginID)' lifts it")
                } else {
                    messages.append("\(what); not quarantined: the library has changed since (or the probe cache does not know it), so it is probed again")
                }
            }
            cache.save()
        }
        CrashMarker.arm(path: marker)
        return messages
    }

    /// sha256 of the file at `path` as it is now (never through a symbolic link), or nil.
    static func currentSHA256(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return try? LibraryHash.hex(fd: fd)
    }
}
