import CTermhost
import TermhostSDK
import Foundation
import TermhostLoader
import TermhostRegistry

/// A plugin's C feature factory as a registry `FeatureFactory`.
struct PluginFeatureFactory: FeatureFactory, @unchecked Sendable {
    let factory: UnsafePointer<termhost_feature_factory_t>
    let pluginID: String

    func makeInstance(of descriptor: FeatureDescriptor, in context: ScopeContext) throws -> any FeatureInstance {
        var info = PluginFeature.info(context)
        var err = termhost_error_t()
        guard let create = factory.pointee.create,
              let raw = create(factory, descriptor.id.rawValue, &info, &err) else {
            let message = termhostErrorMessage(err)
            throw FeatureFailure(feature: descriptor.id,
                                 message: "create() failed: \(message.isEmpty ? "no reason given (code \(err.code))" : message)")
        }
        // A vtable smaller than ABI 1.0's would have the host read callbacks past its end.
        if let problem = StructSizes.featureProblem(UnsafePointer(raw), plugin: pluginID) {
            throw FeatureFailure(feature: descriptor.id, message: "create() returned an unusable instance: \(problem)")
        }
        return PluginFeature(raw: UnsafePointer(raw), id: descriptor.id)
    }
}

/// A live `termhost_feature_t` driven by the lifecycle manager. NULL callbacks are skipped.
final class PluginFeature: FeatureInstance, @unchecked Sendable {
    let raw: UnsafePointer<termhost_feature_t>
    let id: FeatureID

    init(raw: UnsafePointer<termhost_feature_t>, id: FeatureID) {
        self.raw = raw
        self.id = id
    }

    static func info(_ c: ScopeContext) -> termhost_scene_info_t {
        termhost_scene_info_t(struct_size: UInt32(MemoryLayout<termhost_scene_info_t>.size), scene: c.scene,
                              workspace: c.workspace, has_terminal: c.hasTerminal ? 1 : 0)
    }

    func activate(_ context: ScopeContext) throws {
        guard let activate = raw.pointee.activate else { return }
        var info = PluginFeature.info(context)
        var err = termhost_error_t()
        let rc = activate(raw, &info, &err)
        if rc != termhost_status(TERMHOST_OK) {
            let message = termhostErrorMessage(err)
            throw FeatureFailure(feature: id, message: "activate() failed: \(message.isEmpty ? "code \(rc)" : message)")
        }
    }

    func sceneAttached(_ context: ScopeContext) {
        var info = PluginFeature.info(context)
        raw.pointee.scene_attached?(raw, &info)
    }

    func sceneDetached(_ context: ScopeContext) {
        var info = PluginFeature.info(context)
        raw.pointee.scene_detached?(raw, &info)
    }

    func background() { raw.pointee.background?(raw) }
    func foreground() { raw.pointee.foreground?(raw) }
    func expire() { raw.pointee.expire?(raw) }
    func shutdown() { raw.pointee.shutdown?(raw) }
    func destroy() { raw.pointee.destroy?(raw) }

    func service(_ serviceID: String) -> UnsafeRawPointer? { raw.pointee.get_service?(raw, serviceID) }

    /// Runs a contributed command with the scene's streams; returns its exit status.
    func run(command: String, arguments: [String], scene: UInt64, json: Bool) -> Int32 {
        guard let run = raw.pointee.run_command else { return 1 }
        let cArgs = arguments.map { UnsafePointer(strdup($0)) }
        defer { cArgs.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return cArgs.withUnsafeBufferPointer { argv in
            command.withCString { name in
                var inv = termhost_command_invocation_t(
                    struct_size: UInt32(MemoryLayout<termhost_command_invocation_t>.size), command: name,
                    argc: Int32(arguments.count), argv: UnsafeRawPointer(argv.baseAddress)?.assumingMemoryBound(to: UnsafePointer<CChar>?.self),
                    scene: scene, stdin_fd: 0, stdout_fd: 1, stderr_fd: 2, json_output: json ? 1 : 0)
                return run(raw, &inv)
            }
        }
    }
}
