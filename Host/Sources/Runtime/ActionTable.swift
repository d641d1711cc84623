import CTermhost
import Foundation
import Synchronization
import TermhostLoader
import TermhostRegistry
import TermhostSDK

/// The typed actions of the loaded plugins (action.h), by feature and name, each resolved in the
/// host process from its manifest declaration and prepared for libffi at load time.
///
/// Design: a call passes these gates before plugin code runs: the action is declared by an
/// enabled feature whose instance is live; its arguments convert to the declared types
/// (`ActionArguments`: a usage error naming the parameter otherwise); a main-thread action is
/// called on the main thread. The call is bracketed for the crash recorder as
/// `action_call("FEATURE/ACTION")` (quarantined on the next start, as a crashing command is)
/// and recorded as a call in progress, so shutdown never destroys the instance under it.
public final class ActionTable: Sendable {
    struct Entry: Sendable {
        let call: ActionCall
        let crashSlot: Int32
    }

    /// Why a call did not produce a result: a termhost_status and the message; `called` when
    /// the function ran and failed (its own error, or a result the host refused).
    public struct Failure: Error, Equatable, Sendable {
        public let code: Int32
        public let message: String
        public var called = false
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let problems = Mutex<[String: String]>([:])

    init() {}

    /// Resolves and prepares the actions a loaded plugin's manifest declares (`fd`: its library).
    func register(_ manifest: PluginManifest, fd: Int32, crashSlot: Int32) {
        for f in manifest.features {
            for a in f.actions ?? [] {
                let key = f.id.rawValue + "/" + a.name
                guard let address = ActionCheck.resolve(a.symbol, fd: fd) else {
                    problems.withLock { $0[key] = "symbol '\(a.symbol)' is not defined by the plugin's library" }
                    continue
                }
                guard let call = ActionCall(a, function: address) else {
                    problems.withLock { $0[key] = "libffi could not prepare the call (ffi_prep_cif)" }
                    continue
                }
                entries.withLock { $0[key] = Entry(call: call, crashSlot: crashSlot) }
            }
        }
    }

    func entry(_ key: String) -> Entry? { entries.withLock { $0[key] } }
    func problem(_ key: String) -> String? { problems.withLock { $0[key] } }
}

/// `FEATURE/ACTION` with its declaration: what `termhost actions` lists and `call` looks up.
public struct DeclaredAction: Sendable {
    public let feature: FeatureID
    public let action: ActionDescriptor
    /// The plugin that declares it, as the registry names it.
    public let source: String
    public var path: String { feature.rawValue + "/" + action.name }

    /// The enabled process-scope features' actions, from manifests (no plugin code runs),
    /// sorted by path.
    public static func all(_ resolution: Resolution) -> [DeclaredAction] {
        resolution.enabled.filter { $0.descriptor.scope == .process }.flatMap { f in
            f.descriptor.actions.map { DeclaredAction(feature: f.descriptor.id, action: $0, source: f.descriptor.source) }
        }.sorted { $0.path < $1.path }
    }
}

extension HostRuntime {
    /// Converts `arguments` (words, or a JSON object when `json` is set) and calls the action.
    public func callAction(_ path: String, words: [[UInt8]]? = nil, json: [UInt8]? = nil) -> Result<ActionValue?, ActionTable.Failure> {
        func fail(_ code: termhost_status, _ message: String) -> Result<ActionValue?, ActionTable.Failure> {
            .failure(.init(code: code, message: message))
        }
        let shown = VisibleText.of(path)
        guard let declared = DeclaredAction.all(resolution).first(where: { $0.path == path }) else {
            if let f = resolution.features.first(where: { path.hasPrefix($0.descriptor.id.rawValue + "/") }), let reason = f.state.reason,
               f.descriptor.actions.contains(where: { f.descriptor.id.rawValue + "/" + $0.name == path }) {
                return fail(Int32(TERMHOST_ERR_NOT_FOUND), "action '\(shown)' is unavailable: \(reason)")
            }
            return fail(Int32(TERMHOST_ERR_NOT_FOUND), "no enabled feature declares action '\(shown)' (see 'termhost actions')")
        }
        let values: [ActionValue]
        do throws(ActionArgumentError) {
            if let json { values = try ActionArguments.fromJSON(json, for: declared.action) }
            else { values = try ActionArguments.fromWords(words ?? [], for: declared.action) }
        } catch {
            return fail(Int32(TERMHOST_ERR_INVALID_ARGUMENT), "\(shown): \(error)")
        }
        guard let entry = actions.entry(path) else {
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "\(shown): \(actions.problem(path) ?? "the plugin that declares it is not loaded")")
        }
        guard let instance = lifecycle.instance(declared.feature) as? PluginFeature else {
            let reason = lifecycle.failures[declared.feature] ?? "it has no live instance"
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "\(shown): feature '\(declared.feature)' is not running: \(reason)")
        }
        if declared.action.thread == .main, !Thread.isMainThread {
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "\(shown) runs on the main thread only, and this call came from another thread")
        }
        let progress = lifecycle.calls.enter(instance, feature: declared.feature, source: declared.source, command: "action \(path)")
        defer { lifecycle.calls.leave(progress) }
        let outcome = path.withCString { cPath in
            entry.call.call(values) { run in CallTracker.inside(entry.crashSlot, "action_call", cArgument: cPath, run) }
        }
        switch outcome {
        case .result(let value): return .success(value)
        case .failed(let code, let message):
            return .failure(.init(code: code, message: "\(shown): \(VisibleText.of(message))", called: true))
        }
    }
}
