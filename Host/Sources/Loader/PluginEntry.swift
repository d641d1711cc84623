import Foundation
import CTermhost
import TermhostSDK
import Glibc
import TermhostRegistry

/// A plugin image loaded into this process, and its entry struct.
///
/// The image stays resident: it is opened with RTLD_NODELETE and never passed to dlclose,
/// because unloading a Swift image leaves the runtime holding its conformance records and the
/// next dynamic cast crashes (swiftlang/swift#75889). Reloading a plugin means a new process.
public struct PluginEntry: @unchecked Sendable {
    public let entry: UnsafePointer<termhost_plugin_entry_t>

    /// dlopen(`/proc/self/fd/<fd>`) with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE, then look up and
    /// call the entry function. `libraries`: the verified descriptors of the libraries its plugin
    /// set pins, loaded first (PinnedLibraries). `displayPath` is used in messages.
    public static func load(fd: Int32, libraries: [Int32] = [], displayPath: String) throws(LoadFailure) -> PluginEntry {
        try PinnedLibraries.preload(libraries)
        let handle = try DescriptorImage.open(fd, displayPath: displayPath)
        guard let symbol = dlsym(handle, TERMHOST_ENTRY_SYMBOL) else {
            throw .noEntryPoint(symbol: TERMHOST_ENTRY_SYMBOL, path: displayPath)
        }
        let function = unsafeBitCast(symbol, to: termhost_plugin_entry_fn.self)
        guard let entry = function() else {
            throw .probeFailed("\(TERMHOST_ENTRY_SYMBOL)() returned NULL")
        }
        // abi and struct_size are the first 16 bytes of every entry ever defined; nothing past
        // them is read until struct_size says it is there.
        if let problem = TermhostStruct.problem("termhost_plugin_entry_t", structSize: entry.pointee.struct_size,
                                                fields: StructSizes.entry) {
            throw .probeFailed("plugin at \(displayPath): \(problem)")
        }
        return PluginEntry(entry: entry)
    }

    public var abi: termhost_version_t { entry.pointee.abi }
    public var pluginID: String { entry.pointee.plugin_id.map { String(cString: $0) } ?? "" }
    public var pluginVersion: String { entry.pointee.plugin_version.map { String(cString: $0) } ?? "" }

    /// Calls init(host); a false return becomes `.initFailed` with the plugin's own message.
    public func initialize(_ host: UnsafePointer<termhost_host_t>) throws(LoadFailure) {
        guard let initFn = entry.pointee.`init` else { throw .probeFailed("the entry has no init()") }
        var err = termhost_error_t()
        if !initFn(host, &err) {
            let message = termhostErrorMessage(err)
            throw .initFailed(message.isEmpty ? "init() returned false without a message (code \(err.code))" : message)
        }
    }

    public func deinitialize() { entry.pointee.deinit?() }

    /// The plugin's feature factory, or nil if it registered none.
    public var featureFactory: UnsafePointer<termhost_feature_factory_t>? {
        entry.pointee.get_factory?(TERMHOST_FEATURE_FACTORY_ID)?.assumingMemoryBound(to: termhost_feature_factory_t.self)
    }

    /// Reads the factory's descriptors into registry values. Strings are copied.
    public static func descriptors(of factory: UnsafePointer<termhost_feature_factory_t>,
                                   source: String) throws(LoadFailure) -> [FeatureDescriptor] {
        let who = StructSizes.who(source)
        if let problem = TermhostStruct.problem("termhost_feature_factory_t", structSize: factory.pointee.struct_size,
                                                fields: StructSizes.factory) {
            throw .probeFailed("\(who): \(problem)")
        }
        let count = factory.pointee.count?(factory) ?? 0
        var out: [FeatureDescriptor] = []
        for i in 0..<count {
            guard let dp = factory.pointee.get_descriptor?(factory, i) else {
                throw .probeFailed("feature factory returned no descriptor at index \(i)")
            }
            // Checked through the pointer before any member is read.
            if let problem = TermhostStruct.problem("termhost_feature_descriptor_t", structSize: dp.pointee.struct_size,
                                                    fields: StructSizes.descriptor) {
                throw .probeFailed("\(who): descriptor \(i): \(problem)")
            }
            // Member by member through the pointer, never the whole struct: an older plugin's
            // descriptor ends before the members appended since (struct_size says where).
            func str(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
            func list(_ p: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
                guard var p else { return [] }
                var items: [String] = []
                while let s = p.pointee { items.append(String(cString: s)); p += 1 }
                return items
            }
            func ids(_ p: UnsafePointer<UnsafePointer<CChar>?>?) throws(LoadFailure) -> [FeatureID] {
                var result: [FeatureID] = []
                for raw in list(p) {
                    do { result.append(try FeatureID(raw)) } catch { throw .probeFailed(error.description) }
                }
                return result
            }
            var commands: [CommandDescriptor] = []
            if var c = dp.pointee.commands {
                while let cmd = c.pointee {
                    if let problem = TermhostStruct.problem("termhost_command_descriptor_t", structSize: cmd.pointee.struct_size,
                                                            fields: StructSizes.command) {
                        throw .probeFailed("\(who): feature '\(str(dp.pointee.id) ?? "")': command \(commands.count): \(problem)")
                    }
                    commands.append(CommandDescriptor(name: str(cmd.pointee.name) ?? "", summary: str(cmd.pointee.summary) ?? "",
                                                      usage: str(cmd.pointee.usage)))
                    c += 1
                }
            }
            let id: FeatureID
            do { id = try FeatureID(str(dp.pointee.id) ?? "") } catch { throw .probeFailed(error.description) }
            let tools = try Self.tools(of: dp, feature: id.rawValue, who: who)
            let actions = try ActionCheck.read(dp, feature: id.rawValue, who: who)
            // ABI 1.6; an older descriptor ends before it.
            let concurrent = TermhostStruct.has(dp.pointee.struct_size, \termhost_feature_descriptor_t.concurrent_commands) && dp.pointee.concurrent_commands != 0
            out.append(FeatureDescriptor(
                id: id, version: str(dp.pointee.version) ?? "", displayName: str(dp.pointee.display_name), summary: str(dp.pointee.description),
                order: dp.pointee.order, scope: FeatureScope(rawValue: Int32(dp.pointee.scope.rawValue)) ?? .process,
                after: try ids(dp.pointee.after), before: try ids(dp.pointee.before), requiresFeatures: try ids(dp.pointee.requires_features),
                requiresServices: list(dp.pointee.requires_services), providesServices: list(dp.pointee.provides_services),
                commands: commands, tools: tools, actions: actions, concurrentCommands: concurrent, source: source))
        }
        return out
    }

    /// The descriptor's tools (ABI 1.3), copied; none when its struct_size ends before `tools`.
    /// A schema that is not JSON is kept as the JSON string of its text, so the registry refuses
    /// that tool, by name, when features are resolved (`ToolSchema.problem`).
    static func tools(of dp: UnsafePointer<termhost_feature_descriptor_t>, feature: String,
                      who: String) throws(LoadFailure) -> [ToolDescriptor] {
        guard TermhostStruct.has(dp.pointee.struct_size, \termhost_feature_descriptor_t.tools), var t = dp.pointee.tools else { return [] }
        var tools: [ToolDescriptor] = []
        while let tool = t.pointee {
            if let problem = TermhostStruct.problem("termhost_tool_descriptor_t", structSize: tool.pointee.struct_size,
                                                    fields: StructSizes.tool) {
                throw .probeFailed("\(who): feature '\(feature)': tool \(tools.count): \(problem)")
            }
            let schemaText = tool.pointee.input_schema.map { String(cString: $0) } ?? ""
            let schema = (try? JSONDecoder().decode(JSONValue.self, from: Data(schemaText.utf8))) ?? .string(schemaText)
            let flags = tool.pointee.flags, bits = tool.pointee.run_modes
            var modes: [ToolDescriptor.Mode] = []
            if bits & TERMHOST_TOOL_MODE_PLANNING != 0 { modes.append(.planning) }
            if bits & TERMHOST_TOOL_MODE_ACTING != 0 { modes.append(.acting) }
            tools.append(ToolDescriptor(name: tool.pointee.name.map { String(cString: $0) } ?? "",
                                        description: tool.pointee.description.map { String(cString: $0) } ?? "",
                                        inputSchema: schema, readOnly: flags & TERMHOST_TOOL_READ_ONLY != 0,
                                        parallelSafe: flags & TERMHOST_TOOL_PARALLEL_SAFE != 0, modes: modes))
            t += 1
        }
        return tools
    }
}
