import Foundation
import Glibc
import CTermhost
import TermhostRegistry

/// The child side of the probe protocol (see `ProbeRunner`). Runs inside `termhost-probe`.
public enum ProbeChild {
    /// Runs each feature (create, activate, shutdown, destroy), announcing every call with the
    /// given stage function; false when a shutdown was abandoned and deinit() must be skipped.
    public typealias FeatureExercise = (_ factory: UnsafePointer<termhost_feature_factory_t>, _ features: [FeatureDescriptor],
                                        _ stage: (String) -> Void) -> Bool

    /// Loads the library on `fd`, runs entry, init (with `host`), the factory, each feature
    /// (`exercise`) and deinit, and prints stages and the report. Returns the exit status.
    /// Without a manifest (`termhost plugins manifest`, which derives one from the report)
    /// nothing is compared and every feature the factory offers is exercised.
    public static func run(fd: Int32, libraries: [Int32] = [], reportFD: Int32, manifestPath: String?, displayPath: String,
                           makeHost: (String) -> UnsafePointer<termhost_host_t>, exercise: FeatureExercise? = nil) -> Int32 {
        // Unbuffered: a line written before a crash must not be lost.
        let report = FileHandle(fileDescriptor: reportFD, closeOnDealloc: false)
        func say(_ line: String) {
            report.write(Data((line + "\n").utf8))
        }
        func fail(_ failure: LoadFailure) -> Int32 {
            let json = (try? JSONEncoder().encode(failure)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            say("failure \(json)")
            return 3
        }
        // A constructor or init() that forks returns twice: the copy would go on running this
        // code, and in the host every command would then run twice. After each step of plugin
        // code the process checks it is still the one that started; a copy says so and ends
        // at once (_exit: none of the parent's atexit handlers or buffers are its to run).
        let me = getpid()
        func stillMe(_ stage: String) {
            guard getpid() != me else { return }
            say("forked \(stage)")
            _exit(0)
        }
        var manifest: PluginManifest?
        if let manifestPath {
            do { manifest = try PluginManifest.load(from: manifestPath) } catch { return fail(.badManifest(error.description)) }
        }

        say("stage dlopen (the library's constructors)")
        let loadStart = Date()
        let entry: PluginEntry
        do { entry = try PluginEntry.load(fd: fd, libraries: libraries, displayPath: displayPath) } catch { return fail(error) }
        stillMe("dlopen (the library's constructors)")
        let loadMilliseconds = Date().timeIntervalSince(loadStart) * 1000

        say("stage the entry struct returned by \(TERMHOST_ENTRY_SYMBOL)()")
        let abi = entry.abi
        if abi.major != UInt32(TERMHOST_ABI_MAJOR) || abi.minor > UInt32(TERMHOST_ABI_MINOR) {
            return fail(.abiMismatch(plugin: "\(abi.major).\(abi.minor)", host: "\(TERMHOST_ABI_MAJOR).\(TERMHOST_ABI_MINOR)"))
        }
        if let manifest, entry.pluginID != manifest.id {
            return fail(.entryMismatch(field: "id", manifest: manifest.id, library: entry.pluginID))
        }
        if let manifest, entry.pluginVersion != manifest.version {
            return fail(.entryMismatch(field: "version", manifest: manifest.version, library: entry.pluginVersion))
        }

        say("stage init()")
        let initStart = Date()
        do { try entry.initialize(makeHost(entry.pluginID)) } catch { stillMe("init()"); return fail(error) }
        stillMe("init()")
        let initMilliseconds = Date().timeIntervalSince(initStart) * 1000

        say("stage get_factory(\"\(TERMHOST_FEATURE_FACTORY_ID)\")")
        var features: [PluginManifest.Feature] = []
        var mayDeinit = true
        if let factory = entry.featureFactory {
            say("stage the feature factory's descriptors")
            let descriptors: [FeatureDescriptor]
            do { descriptors = try PluginEntry.descriptors(of: factory, source: entry.pluginID) } catch { return fail(error) }
            features = descriptors.map(PluginManifest.Feature.init)
            stillMe("the feature factory's descriptors")
            if let problem = ActionCheck.problem(features: descriptors, fd: fd) {
                return fail(.probeFailed("plugin '\(entry.pluginID)': \(problem)"))
            }
            // Only features the manifest declares, so that a mismatch is reported as one
            // (by the parent, from the report) rather than run.
            let declared = manifest.map { Set($0.features.map(\.id)) }
            if let exercise, descriptors.allSatisfy({ declared?.contains($0.id) ?? true }) {
                var current = "the feature factory's descriptors"
                mayDeinit = exercise(factory, descriptors) { next in
                    stillMe(current)
                    current = next
                    say("stage \(next)")
                }
                stillMe(current)
            }
        }

        if mayDeinit {
            say("stage deinit()")
            entry.deinitialize()
            stillMe("deinit()")
        }

        let result = ProbeReport(pluginID: entry.pluginID, pluginVersion: entry.pluginVersion,
                                 abi: [abi.major, abi.minor, abi.patch], features: features,
                                 loadMilliseconds: loadMilliseconds, initMilliseconds: initMilliseconds)
        let json = (try? JSONEncoder().encode(result)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        say("report \(json)")
        return 0
    }
}
