import Foundation
import Glibc
import TermhostLoader
import TermhostSDK

/// `termhost plugins manifest <library> [--output FILE]`: the manifest.json a built library
/// declares, derived from its own code so that nobody writes it by hand (Docs/PluginGuide.md).
/// The library runs only in the probe child, exactly as `plugins check` runs it; a library that
/// fails prints the problems `check` would print, and nothing is written.
enum ManifestCommand {
    static let usage = "usage: termhost plugins manifest <library.so> [--output FILE]"

    static let spec = CommandArguments("termhost plugins manifest", usage: usage, options: [.value("--output")], maxArguments: 1)

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, spec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        let output = parsed.value("--output")
        guard let library = parsed.arguments.first else { Output.err(usage); return ExitCode.usage }
        let path = URL(fileURLWithPath: library).standardizedFileURL.path
        let derived: PluginManifest
        switch derive(path, g) {
        case .success(let manifest): derived = manifest
        case .failure(let problems):
            for p in problems.list { Output.err("problem: \(p)") }
            Output.err("\(path): \(problems.list.count) problem(s); no manifest written")
            return ExitCode.failure
        }
        guard let output else {
            FileHandle.standardOutput.write(Data(derived.jsonText.utf8))
            return ExitCode.success
        }
        if let problem = writeAtomically(derived.jsonText, to: output) {
            Output.err("termhost: cannot write \(output): \(problem)")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    struct Problems: Error { var list: [String] }

    /// Runs the checks of `plugins check` that need no manifest, probes the library, and checks
    /// the manifest its report makes as the loader would.
    static func derive(_ path: String, _ g: GlobalOptions) -> Result<PluginManifest, Problems> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(Problems(list: [LoadFailure.libraryMissing(path: path, reason: String(cString: strerror(errno))).description]))
        }
        defer { close(fd) }
        if let failure = Preflight.libraryProblem(fd: fd, path: path) { return .failure(Problems(list: [failure.description])) }
        var problems: [String] = []
        let elf = try? ELFFile(fd: fd)
        switch g.runtimeOptions().probe.probeUndeclared(fd: fd, libraryPath: path) {
        case .quarantined(let failure):
            if let elf { problems += BundleReview.exportProblems(elf, library: path) }
            problems.append(failure.description)
        case .passed(let report):
            if let elf { problems += BundleReview.exportProblems(elf, library: path, actions: BundleReview.actionSymbols(report.features)) }
            let name = PathText.lastComponent(path)
            let derived = PluginManifest(derivedFrom: report, library: name)
            // The loader's own rules (namespaces, at least one feature), on the bytes it will read.
            do {
                let manifest = try PluginManifest.decode(Data(derived.jsonText.utf8), file: "the manifest of \(path)")
                problems += BundleReview.features(manifest, source: "plugin '\(manifest.id)' (\(path))").problems
            } catch {
                problems.append(error.description)
            }
            if problems.isEmpty { return .success(derived) }
        }
        return .failure(Problems(list: problems))
    }

    /// Writes a temporary file beside `file` and renames it over `file`, so that a reader (or a
    /// make rule interrupted half way) never sees a truncated manifest. Returns the error, or nil.
    static func writeAtomically(_ text: String, to file: String) -> String? {
        let directory = PathText.parent(file)
        var template = Array(((directory.isEmpty ? "." : directory) + "/.manifest.json.XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let e = String(cString: strerror(errno)); close(fd); unlink(temporary); return e }
            written += n
        }
        // mkstemp makes it 0600; a manifest is read by whoever runs the host.
        let flushed = fchmod(fd, 0o644) == 0 && fsync(fd) == 0
        let flushError = errno
        guard close(fd) == 0, flushed else {
            let e = String(cString: strerror(flushed ? errno : flushError)); unlink(temporary); return e
        }
        guard rename(temporary, file) == 0 else { let e = String(cString: strerror(errno)); unlink(temporary); return e }
        return nil
    }
}
