import CTermhost
import Foundation
import TermhostRegistry

/// The part of the probe (run in `termhost-probe`, see ProbeChild) that runs each feature the
/// way a host would: create, activate, shutdown, destroy, against the probe's throwaway host
/// (store and secrets in memory). Before this a plugin whose feature crashed in create or
/// activate passed the probe and then took every command of every plugin down with it.
///
/// A create or activate that fails with an error is not the probe's concern (the feature may
/// need another plugin's service, absent here); a crash or a hang is, and the probe's stage
/// lines name the call. A shutdown that does not return within `shutdownBound` is left, as the
/// host does (feature.h): no destroy or deinit follows, and the probe still passes, because
/// the host bounds shutdown the same way.
public enum ProbeFeatureExercise {
    public static let shutdownBound = 1.0

    /// Returns false when a shutdown was abandoned: the caller must not call deinit().
    public static func run(_ factory: UnsafePointer<termhost_feature_factory_t>, features: [FeatureDescriptor], pluginID: String,
                           services: HostServices, stage: (String) -> Void) -> Bool {
        let maker = PluginFeatureFactory(factory: factory, pluginID: pluginID)
        let live = LiveFeatures()
        // A feature may use a service another feature of the same plugin provides.
        services.providedService = { id in live.service(id) }
        var activated: [PluginFeature] = []
        for d in startOrder(features) {
            let context = ScopeContext(scene: d.scope == .process ? 0 : 1, workspace: d.scope == .workspace ? 1 : 0)
            stage("create(\"\(d.id)\")")
            guard let instance = (try? maker.makeInstance(of: d, in: context)) as? PluginFeature else { continue }
            live.add(instance, provides: d.providesServices)
            stage("activate(\"\(d.id)\")")
            if (try? instance.activate(context)) != nil { activated.append(instance) }
        }
        for instance in activated.reversed() {
            stage("shutdown(\"\(instance.id)\")")
            guard bounded(instance.shutdown) else { return false }
        }
        for instance in live.all.reversed() {
            stage("destroy(\"\(instance.id)\")")
            instance.destroy()
        }
        services.providedService = { _ in nil }
        return true
    }

    /// By `order`, each feature after the features of this plugin it requires.
    static func startOrder(_ features: [FeatureDescriptor]) -> [FeatureDescriptor] {
        var pending = features.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }.map(\.element)
        let ids = Set(features.map(\.id))
        var done = Set<FeatureID>()
        var out: [FeatureDescriptor] = []
        while !pending.isEmpty {
            let i = pending.firstIndex { $0.requiresFeatures.allSatisfy { !ids.contains($0) || done.contains($0) } } ?? 0
            let d = pending.remove(at: i)
            done.insert(d.id)
            out.append(d)
        }
        return out
    }

    /// Runs `body` on a thread of its own; false when it has not returned within the bound.
    static func bounded(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done.wait(timeout: .now() + shutdownBound) == .success
    }

    final class LiveFeatures: @unchecked Sendable {
        private let lock = NSLock()
        private var instances: [(PluginFeature, [String])] = []

        func add(_ f: PluginFeature, provides: [String]) { lock.withLock { instances.append((f, provides)) } }
        var all: [PluginFeature] { lock.withLock { instances.map(\.0) } }

        func service(_ id: String) -> UnsafeRawPointer? {
            let candidates = lock.withLock { instances.filter { $0.1.contains(id) }.map(\.0) }
            for f in candidates { if let p = f.service(id) { return p } }
            return nil
        }
    }
}
