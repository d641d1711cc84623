import Foundation
import TermhostLifecycle
import TermhostRegistry

/// Records every callback in order, across instances, so tests can check sequences.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var events: [String] { lock.lock(); defer { lock.unlock() }; return items }
    func count(_ prefix: String) -> Int { events.filter { $0.hasPrefix(prefix) }.count }
}

final class FakeFeature: FeatureInstance, @unchecked Sendable {
    let name: String
    let recorder: Recorder
    let hangInShutdown: Bool
    init(name: String, recorder: Recorder, hangInShutdown: Bool) {
        self.name = name
        self.recorder = recorder
        self.hangInShutdown = hangInShutdown
    }
    func activate(_ c: ScopeContext) throws {
        if name.hasSuffix("broken") { throw FeatureFailure(feature: FeatureID(checked: "org.t.broken"), message: "cannot reach the agent") }
        recorder.add("activate \(name)")
    }
    func sceneAttached(_ c: ScopeContext) { recorder.add("attached \(name) \(c.scene)") }
    func sceneDetached(_ c: ScopeContext) { recorder.add("detached \(name) \(c.scene)") }
    func background() { recorder.add("background \(name)") }
    func foreground() { recorder.add("foreground \(name)") }
    func expire() { recorder.add("expire \(name)") }
    func shutdown() {
        recorder.add("shutdown \(name)")
        if hangInShutdown { while true { sleep(1) } }
    }
    func destroy() { recorder.add("destroy \(name)") }
}

struct FakeFactory: FeatureFactory {
    let recorder: Recorder
    var hangs: Set<String> = []
    func makeInstance(of d: FeatureDescriptor, in c: ScopeContext) throws -> any FeatureInstance {
        let short = String(d.id.rawValue.split(separator: ".").last!)
        let name = c.workspace != 0 ? "\(short)@w\(c.workspace)" : c.scene != 0 ? "\(short)@s\(c.scene)" : short
        return FakeFeature(name: name, recorder: recorder, hangInShutdown: hangs.contains(short))
    }
}

/// A manager over features described as (name, scope, order), created by a FakeFactory.
func manager(_ specs: [(String, FeatureScope, Int32)], requires: [String: String] = [:], recorder: Recorder,
             hangs: Set<String> = [], options: LifecycleManager.Options = .init(shutdownBound: 1, backgroundGrace: nil),
             onEvent: @escaping @Sendable (LifecycleEvent) -> Void = { _ in }) throws -> LifecycleManager {
    var registry = FeatureRegistry()
    for (name, scope, order) in specs {
        try registry.register(FeatureDescriptor(id: FeatureID(checked: "org.t.\(name)"), order: order, scope: scope,
                                                requiresFeatures: requires[name].map { [FeatureID(checked: "org.t.\($0)")] } ?? [],
                                                source: "test"),
                              factory: FakeFactory(recorder: recorder, hangs: hangs))
    }
    return LifecycleManager(features: registry.resolve(EffectivePolicy(), hostServices: []).features, options: options, onEvent: onEvent)
}
