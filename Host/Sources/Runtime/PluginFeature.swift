import CTermhost
import TermhostSDK
import Foundation
import Glibc
import TermhostLoader
import TermhostRegistry

/// A plugin's C feature factory as a registry `FeatureFactory`.
struct PluginFeatureFactory: FeatureFactory, @unchecked Sendable {
    let factory: UnsafePointer<termhost_feature_factory_t>
    let pluginID: String
    /// The plugin's slot in the crash recorder (see CallTracker).
    var crashSlot: Int32 = CallTracker.unregistered

    func makeInstance(of descriptor: FeatureDescriptor, in context: ScopeContext) throws -> any FeatureInstance {
        var info = PluginFeature.info(context)
        var err = termhost_error_t()
        let made = CallTracker.inside(crashSlot, "create", descriptor.id.rawValue) {
            factory.pointee.create.flatMap { create in create(factory, descriptor.id.rawValue, &info, &err) }
        }
        guard let raw = made else {
            let message = termhostErrorMessage(err)
            throw FeatureFailure(feature: descriptor.id,
                                 message: "create() failed: \(message.isEmpty ? "no reason given (code \(err.code))" : message)")
        }
        // A vtable smaller than ABI 1.0's would have the host read callbacks past its end.
        if let problem = StructSizes.featureProblem(UnsafePointer(raw), plugin: pluginID) {
            throw FeatureFailure(feature: descriptor.id, message: "create() returned an unusable instance: \(problem)")
        }
        return PluginFeature(raw: UnsafePointer(raw), id: descriptor.id, crashSlot: crashSlot)
    }
}

/// A live `termhost_feature_t` driven by the lifecycle manager. NULL callbacks are skipped.
final class PluginFeature: FeatureInstance, @unchecked Sendable {
    let raw: UnsafePointer<termhost_feature_t>
    let id: FeatureID
    let crashSlot: Int32
    /// The ID as a C string for the crash recorder's slot, made once rather than per call.
    private let cID: UnsafeMutablePointer<CChar>

    init(raw: UnsafePointer<termhost_feature_t>, id: FeatureID, crashSlot: Int32 = CallTracker.unregistered) {
        self.raw = raw
        self.id = id
        self.crashSlot = crashSlot
        cID = strdup(id.rawValue)
    }

    deinit { free(cID) }

    /// Runs one callback with the crash recorder told which feature and call it is.
    @inline(__always)
    private func call<T>(_ name: StaticString, _ body: () -> T) -> T {
        CallTracker.inside(crashSlot, name, cArgument: cID, body)
    }

    static func info(_ c: ScopeContext) -> termhost_scene_info_t {
        termhost_scene_info_t(struct_size: UInt32(MemoryLayout<termhost_scene_info_t>.size), scene: c.scene,
                              workspace: c.workspace, has_terminal: c.hasTerminal ? 1 : 0)
    }

    func activate(_ context: ScopeContext) throws {
        guard let activate = raw.pointee.activate else { return }
        var info = PluginFeature.info(context)
        var err = termhost_error_t()
        let rc = call("activate") { activate(raw, &info, &err) }
        if rc != termhost_status(TERMHOST_OK) {
            let message = termhostErrorMessage(err)
            throw FeatureFailure(feature: id, message: "activate() failed: \(message.isEmpty ? "code \(rc)" : message)")
        }
    }

    func sceneAttached(_ context: ScopeContext) {
        var info = PluginFeature.info(context)
        call("scene_attached") { raw.pointee.scene_attached?(raw, &info) }
    }

    func sceneDetached(_ context: ScopeContext) {
        var info = PluginFeature.info(context)
        call("scene_detached") { raw.pointee.scene_detached?(raw, &info) }
    }

    func background() { call("background") { raw.pointee.background?(raw) } }
    func foreground() { call("foreground") { raw.pointee.foreground?(raw) } }
    func expire() { call("expire") { raw.pointee.expire?(raw) } }
    func shutdown() { call("shutdown") { raw.pointee.shutdown?(raw) } }
    func destroy() { call("destroy") { raw.pointee.destroy?(raw) } }

    func service(_ serviceID: String) -> UnsafeRawPointer? { call("get_service") { raw.pointee.get_service?(raw, serviceID) } }

    /// Runs a contributed command with the scene's streams; returns its exit status.
    func run(command: String, arguments: [String], scene: UInt64, json: Bool, stdio: SceneStdio = .process) -> Int32 {
        guard let run = raw.pointee.run_command else { return 1 }
        let cArgs = arguments.map { UnsafePointer(strdup($0)) }
        defer { cArgs.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return cArgs.withUnsafeBufferPointer { argv in
            command.withCString { name in
                var inv = termhost_command_invocation_t(
                    struct_size: UInt32(MemoryLayout<termhost_command_invocation_t>.size), command: name,
                    argc: Int32(arguments.count), argv: UnsafeRawPointer(argv.baseAddress)?.assumingMemoryBound(to: UnsafePointer<CChar>?.self),
                    scene: scene, stdin_fd: stdio.input, stdout_fd: stdio.output, stderr_fd: stdio.error, json_output: json ? 1 : 0)
                // The slot names the command (valid for exactly this call).
                return CallTracker.inside(crashSlot, "run_command", cArgument: name) { run(raw, &inv) }
            }
        }
    }
}
