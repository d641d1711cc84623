import CTermhost
import Synchronization

/// A plugin written in Swift: its ID, version and features. Define one as a global and export
/// its entry point; that is the whole boilerplate:
///
/// ```swift
/// let plugin = Plugin(id: "org.example.hello", version: "1.0.0", features: [Hello.self])
/// @_cdecl("termhost_plugin_entry")
/// public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
/// ```
///
/// Link the plugin with `SDK/Swift/plugin-exports.map` so only that symbol is exported.
/// Each plugin image has its own copy of this module, so the one `Plugin` per image is found
/// through a module-level reference set when the entry is first built.
public final class Plugin: @unchecked Sendable {
    public let id: String
    public let version: String
    let features: [any Feature.Type]
    /// The ABI minor this plugin declares (the derived manifest's "abi" says the same): by default
    /// the minor of the headers the SDK was built with. A plugin that uses nothing newer may
    /// declare less, so that it also loads in an older host; it then reads every member added
    /// later through `TermhostStruct.member` and expects `nil` for services that came later (the
    /// SDK's own wrappers already do both).
    public let abiMinorNeeded: UInt32
    let onInit: ((PluginHost) throws -> Void)?
    /// Set by init(); nil before and after deinit(). Touched only on the host's lifecycle thread.
    var host: PluginHost?

    public init(id: String, version: String, features: [any Feature.Type],
                abiMinorNeeded: UInt32 = UInt32(TERMHOST_ABI_MINOR),
                onInit: ((PluginHost) throws -> Void)? = nil) {
        // Declaring a minor these headers do not have would promise members that are not there.
        precondition(abiMinorNeeded <= UInt32(TERMHOST_ABI_MINOR),
                     "abiMinorNeeded \(abiMinorNeeded) is newer than these headers' ABI 1.\(TERMHOST_ABI_MINOR)")
        self.abiMinorNeeded = abiMinorNeeded
        self.id = id
        self.version = version
        self.features = features
        self.onInit = onInit
    }

    /// The `termhost_plugin_entry_t` to return from the exported entry function.
    public var entry: UnsafeRawPointer {
        Plugin.lock.withLock { _ in
            if let built = Plugin.builtEntry { return built }
            Plugin.current = self
            let e = UnsafeMutablePointer<termhost_plugin_entry_t>.allocate(capacity: 1)
            e.initialize(to: termhost_plugin_entry_t(
                abi: termhost_version_t(major: UInt32(TERMHOST_ABI_MAJOR), minor: abiMinorNeeded,
                                        patch: UInt32(TERMHOST_ABI_PATCH)),
                struct_size: UInt32(MemoryLayout<termhost_plugin_entry_t>.size),
                plugin_id: Immortal.string(id),
                plugin_version: Immortal.string(version),
                init: { host, err in Plugin.current!.start(host, err) },
                deinit: { Plugin.current!.host = nil },
                get_factory: { id in
                    guard let id, String(cString: id) == TERMHOST_FEATURE_FACTORY_ID else { return nil }
                    return UnsafeRawPointer(Plugin.current!.factory)
                }))
            Plugin.builtEntry = UnsafeRawPointer(e)
            return UnsafeRawPointer(e)
        }
    }

    nonisolated(unsafe) static var current: Plugin?
    nonisolated(unsafe) static var builtEntry: UnsafeRawPointer?
    static let lock = Mutex<Void>(())

    private func start(_ raw: UnsafePointer<termhost_host_t>?, _ err: UnsafeMutablePointer<termhost_error_t>?) -> Bool {
        guard let raw else {
            termhostWriteError(err, Int32(TERMHOST_ERR_INVALID_ARGUMENT), "init() got a NULL host")
            return false
        }
        let host = PluginHost(raw)
        do {
            try onInit?(host)
        } catch {
            termhostWriteError(err, (error as? PluginError)?.code ?? Int32(TERMHOST_ERR_INTERNAL), "\(error)")
            return false
        }
        self.host = host
        return true
    }

    private lazy var descriptors: [UnsafePointer<termhost_feature_descriptor_t>] = features.map { Plugin.describe($0.info) }

    private lazy var factory: UnsafePointer<termhost_feature_factory_t> = {
        let f = UnsafeMutablePointer<termhost_feature_factory_t>.allocate(capacity: 1)
        f.initialize(to: termhost_feature_factory_t(
            struct_size: UInt32(MemoryLayout<termhost_feature_factory_t>.size),
            count: { _ in UInt32(Plugin.current!.features.count) },
            get_descriptor: { _, index in
                let p = Plugin.current!
                return Int(index) < p.descriptors.count ? p.descriptors[Int(index)] : nil
            },
            create: { _, featureID, info, err in
                Plugin.current!.create(featureID.map { String(cString: $0) } ?? "", info, err)
            }))
        return UnsafePointer(f)
    }()

    private func create(_ featureID: String, _ info: UnsafePointer<termhost_scene_info_t>?,
                        _ err: UnsafeMutablePointer<termhost_error_t>?) -> UnsafeMutablePointer<termhost_feature_t>? {
        guard let type = features.first(where: { $0.info.id == featureID }) else {
            termhostWriteError(err, Int32(TERMHOST_ERR_NOT_FOUND), "plugin \(id) has no feature '\(featureID)'")
            return nil
        }
        guard let host else {
            termhostWriteError(err, Int32(TERMHOST_ERR_INVALID_ARGUMENT), "create() called before init()")
            return nil
        }
        do {
            let instance = try type.init(host: host, scene: SceneInfo(info))
            return FeatureBridge.wrap(instance)
        } catch {
            termhostWriteError(err, (error as? PluginError)?.code ?? Int32(TERMHOST_ERR_INTERNAL), "\(error)")
            return nil
        }
    }

    private static func tools(_ tools: [Tool]) -> UnsafePointer<UnsafePointer<termhost_tool_descriptor_t>?>? {
        guard !tools.isEmpty else { return nil }
        let list = UnsafeMutablePointer<UnsafePointer<termhost_tool_descriptor_t>?>.allocate(capacity: tools.count + 1)
        for (i, t) in tools.enumerated() {
            let d = UnsafeMutablePointer<termhost_tool_descriptor_t>.allocate(capacity: 1)
            d.initialize(to: termhost_tool_descriptor_t(
                struct_size: UInt32(MemoryLayout<termhost_tool_descriptor_t>.size),
                name: Immortal.string(t.name), description: Immortal.string(t.description),
                input_schema: Immortal.string(t.inputSchema), flags: t.flags, run_modes: t.modes.rawValue))
            list[i] = UnsafePointer(d)
        }
        list[tools.count] = nil
        return UnsafePointer(list)
    }

    private static func describe(_ info: FeatureInfo) -> UnsafePointer<termhost_feature_descriptor_t> {
        var commands: UnsafePointer<UnsafePointer<termhost_command_descriptor_t>?>? = nil
        if !info.commands.isEmpty {
            let list = UnsafeMutablePointer<UnsafePointer<termhost_command_descriptor_t>?>.allocate(capacity: info.commands.count + 1)
            for (i, c) in info.commands.enumerated() {
                let d = UnsafeMutablePointer<termhost_command_descriptor_t>.allocate(capacity: 1)
                d.initialize(to: termhost_command_descriptor_t(
                    struct_size: UInt32(MemoryLayout<termhost_command_descriptor_t>.size),
                    name: Immortal.string(c.name), summary: Immortal.string(c.summary),
                    usage: Immortal.string(c.usage)))
                list[i] = UnsafePointer(d)
            }
            list[info.commands.count] = nil
            commands = UnsafePointer(list)
        }
        let d = UnsafeMutablePointer<termhost_feature_descriptor_t>.allocate(capacity: 1)
        d.initialize(to: termhost_feature_descriptor_t(
            struct_size: UInt32(MemoryLayout<termhost_feature_descriptor_t>.size),
            id: Immortal.string(info.id), version: Immortal.string(info.version),
            display_name: Immortal.string(info.displayName), description: Immortal.string(info.summary),
            order: info.order, scope: info.scope.raw,
            after: Immortal.list(info.after), before: Immortal.list(info.before),
            requires_features: Immortal.list(info.requiresFeatures),
            requires_services: Immortal.list(info.requiresServices),
            provides_services: Immortal.list(info.providesServices),
            commands: commands, tools: tools(info.tools), actions: Action.descriptors(info.actions),
            concurrent_commands: info.concurrentCommands ? 1 : 0))
        return UnsafePointer(d)
    }
}

/// Adapts a Swift `Feature` to a `termhost_feature_t`. The instance is retained through
/// feature_data until destroy().
enum FeatureBridge {
    final class Box {
        let feature: any Feature
        /// The termhost.tool-provider/1 table of a feature that implements ToolProviding.
        var toolProvider: UnsafeMutablePointer<termhost_tool_provider_t>?
        init(_ f: any Feature) { feature = f }
    }

    static func provider(_ context: UnsafeMutableRawPointer?) -> (any ToolProviding)? {
        guard let context else { return nil }
        return Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().feature as? any ToolProviding
    }

    static func feature(_ f: UnsafePointer<termhost_feature_t>?) -> any Feature {
        Unmanaged<Box>.fromOpaque(f!.pointee.feature_data).takeUnretainedValue().feature
    }

    static func wrap(_ instance: any Feature) -> UnsafeMutablePointer<termhost_feature_t> {
        let f = UnsafeMutablePointer<termhost_feature_t>.allocate(capacity: 1)
        f.initialize(to: termhost_feature_t(
            struct_size: UInt32(MemoryLayout<termhost_feature_t>.size),
            feature_data: {
                let box = Box(instance)
                let data = Unmanaged.passRetained(box).toOpaque()
                if instance is any ToolProviding { box.toolProvider = ToolProviderBridge.table(context: data) }
                return data
            }(),
            // Each [main] callback is marked for the debug checks of ThreadRules.
            activate: { f, _, err in
                ThreadRules.main {
                    do { try FeatureBridge.feature(f).activate(); return Int32(TERMHOST_OK) } catch {
                        let code = (error as? PluginError)?.code ?? Int32(TERMHOST_ERR_INTERNAL)
                        termhostWriteError(err, code, "\(error)")
                        return code
                    }
                }
            },
            scene_attached: { f, info in ThreadRules.main { FeatureBridge.feature(f).sceneAttached(SceneInfo(info)) } },
            scene_detached: { f, info in ThreadRules.main { FeatureBridge.feature(f).sceneDetached(SceneInfo(info)) } },
            background: { f in ThreadRules.main { FeatureBridge.feature(f).background() } },
            foreground: { f in ThreadRules.main { FeatureBridge.feature(f).foreground() } },
            expire: { f in ThreadRules.main { FeatureBridge.feature(f).expire() } },
            shutdown: { f in ThreadRules.main { FeatureBridge.feature(f).shutdown() } },
            destroy: { f in
                guard let f else { return }
                let box = Unmanaged<Box>.fromOpaque(f.pointee.feature_data)
                box.takeUnretainedValue().toolProvider?.deallocate()
                box.release()
                UnsafeMutablePointer(mutating: f).deallocate()
            },
            get_service: { f, id in
                guard let id else { return nil }
                let name = String(cString: id)
                if name == TERMHOST_TOOL_PROVIDER, let f {
                    let box = Unmanaged<Box>.fromOpaque(f.pointee.feature_data).takeUnretainedValue()
                    return box.toolProvider.map { UnsafeRawPointer($0) }
                }
                return FeatureBridge.feature(f).service(name)
            },
            run_command: { f, inv in
                guard let inv = inv?.pointee else { return 2 }
                let args = (0..<Int(inv.argc)).map { String(cString: inv.argv[$0]!) }
                return ThreadRules.main { FeatureBridge.feature(f).run(CommandInvocation(
                    command: String(cString: inv.command), arguments: args, scene: inv.scene,
                    stdinFD: inv.stdin_fd, stdoutFD: inv.stdout_fd, stderrFD: inv.stderr_fd, jsonOutput: inv.json_output != 0)) }
            }))
        return f
    }
}
