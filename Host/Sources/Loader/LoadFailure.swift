import TermhostRegistry

/// Why a plugin was not loaded. One case per stage, each carrying the evidence an operator
/// needs; `description` is the sentence `termhost doctor` prints after the plugin's name.
public enum LoadFailure: Error, Equatable, Sendable, Codable, CustomStringConvertible {
    case unreadableDirectory(path: String, reason: String)
    case badManifest(String)
    case libraryMissing(path: String, reason: String)
    case notLoadable(path: String, reason: String)
    case architectureMismatch(library: String, plugin: String, host: String)
    case abiMismatch(plugin: String, host: String)
    case toolchainMismatch(plugin: String, host: String)
    case hashMismatch(library: String, expected: String, actual: String, pinnedBy: String)
    /// A library the plugin set pins for this plugin (PinnedLibraries) is missing or not loadable.
    case pinnedLibraryUnusable(library: String, reason: String, pinnedBy: String)
    case versionMismatch(expected: String, actual: String, pinnedBy: String)
    case shadowed(by: String)
    case notInPluginSet
    case thirdPartyInSafeMode
    case pluginSetUnusable(String)
    case cannotOpen(path: String, reason: String)
    case noEntryPoint(symbol: String, path: String)
    case entryMismatch(field: String, manifest: String, library: String)
    case abiDeclaredWrong(manifest: String, library: String)
    case crashedInProbe(signal: Int32, stage: String)
    /// A host process died of `signal` inside `call` of this plugin (see CrashMarker).
    case crashedInHost(signal: Int32, call: String)
    case probeTimedOut(seconds: Double, stage: String)
    case probeFailed(String)
    case probeUnavailable(String)
    case initFailed(String)
    case disabledByRegistry(String)
    /// Others could have written the file or a directory above it (see `SafePath`).
    case unsafePermissions(String)
    case forkedInProbe(stage: String)
    case probeLeftProcesses(stage: String)
    /// Its feature ID belongs to another plugin's namespace.
    case featureClaimed(String)

    public var description: String {
        switch self {
        case .unreadableDirectory(let path, let reason):
            "cannot read plugin directory \(path): \(reason)"
        case .badManifest(let detail):
            detail
        case .libraryMissing(let path, let reason):
            "cannot open library \(path): \(reason)"
        case .notLoadable(let path, let reason):
            "\(path) is not a loadable plugin: \(reason)"
        case .architectureMismatch(let library, let plugin, let host):
            "\(library) is built for \(plugin) but this host runs on \(host)"
        case .abiMismatch(let plugin, let host):
            "built for Termhost ABI \(plugin) but this host implements ABI \(host); rebuild it against this host's SDK"
        case .toolchainMismatch(let plugin, let host):
            "built with a different Swift toolchain (\(plugin)) but this host runs \(host); Swift has no stable ABI on Linux, so rebuild it with the host's toolchain"
        case .hashMismatch(let library, let expected, let actual, let pinnedBy):
            "sha256 of \(library) is \(actual) but \(pinnedBy) expects \(expected); the file was changed or replaced"
        case .pinnedLibraryUnusable(let library, let reason, let pinnedBy):
            "refused: \(library), a library it loads that \(pinnedBy) pins, cannot be used: \(reason)"
        case .versionMismatch(let expected, let actual, let pinnedBy):
            "version \(actual) does not match version \(expected) pinned by \(pinnedBy)"
        case .shadowed(let by):
            "not loaded: a plugin with the same ID was found first in \(by)"
        case .notInPluginSet:
            "skipped in safe mode: not part of an installed plugin set"
        case .thirdPartyInSafeMode:
            "skipped in safe mode: only the distribution's and the system's plugin directories are used"
        case .pluginSetUnusable(let detail):
            "refused: the plugin set of its directory cannot be used, so nothing there can be verified (\(detail))"
        case .cannotOpen(let path, let reason):
            "unable to load shared library \(path): \(reason)"
        case .noEntryPoint(let symbol, let path):
            "no entry point \(symbol) in shared library \(path)"
        case .entryMismatch(let field, let manifest, let library):
            "the manifest says \(field) '\(manifest)' but the library says '\(library)'"
        case .abiDeclaredWrong(let manifest, let library):
            "the manifest says abi '\(manifest)' but the library was built against ABI \(library) (what its entry declares: TERMHOST_ABI_INIT, which is the headers' minor unless TERMHOST_ABI_MINOR_NEEDED lowers it); derive the manifest again from the library (termhost plugins manifest LIBRARY), or set \"abi\": \"\(library)\" in it"
        case .crashedInProbe(let signal, let stage):
            "probe crashed with \(LoadFailure.signalName(signal)) in \(stage)"
        case .crashedInHost(let signal, let call):
            "crashed termhost with \(LoadFailure.signalName(signal)) in \(call)"
        case .probeTimedOut(let seconds, let stage):
            "probe timed out after \(LoadFailure.format(seconds)) s in \(stage)"
        case .probeFailed(let detail):
            "probe failed: \(detail)"
        case .probeUnavailable(let detail):
            "the probe could not run (\(detail)); it is tried again on the next start"
        case .initFailed(let message):
            "error during initialization: \(message)"
        case .disabledByRegistry(let reason):
            reason
        case .unsafePermissions(let reason):
            reason
        case .forkedInProbe(let stage):
            "refused: the plugin forked a copy of the process in \(stage), and the copy went on running the host's code (every command would run twice)"
        case .probeLeftProcesses(let stage):
            "refused: the probe finished (last stage: \(stage)) but left processes behind that still hold its report pipe; a plugin must not start background processes when it is loaded or initialised"
        case .featureClaimed(let detail):
            detail
        }
    }

    /// Failures found by running the plugin in the probe; the plugin is quarantined until its
    /// library changes.
    public var isQuarantine: Bool {
        switch self {
        case .crashedInProbe, .crashedInHost, .probeTimedOut, .probeFailed, .noEntryPoint, .cannotOpen, .entryMismatch, .abiDeclaredWrong, .initFailed,
             .forkedInProbe, .probeLeftProcesses:
            true
        default:
            false
        }
    }

    public static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
                                      9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"]
        return names[signal] ?? "signal \(signal)"
    }

    /// Whole seconds without ".0". Guarded: the value may come from a cache file on disk, and
    /// Int(_:) traps on NaN, infinities and anything beyond Int's range.
    static func format(_ seconds: Double) -> String {
        seconds.isFinite && abs(seconds) < 1e15 && seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)
    }
}
