import CTermhost
import TermhostSDK

/// The members of each struct a plugin hands the host, in declaration order, with the minor
/// that added them (all 1.0 so far; a struct added later lists its own first members). The host refuses a struct whose struct_size does not cover
/// the 1.0 members: reading past it would read whatever follows in the plugin's memory, and a
/// callback pointer read from there would be jumped to. Members added later are optional by
/// nature and are checked with TermhostStruct.has where they are used.
public enum StructSizes {
    typealias F = TermhostStruct.Field

    static let entry: [F<termhost_plugin_entry_t>] = [
        F("abi", \.abi), F("struct_size", \.struct_size), F("plugin_id", \.plugin_id),
        F("plugin_version", \.plugin_version), F("init", \.`init`), F("deinit", \.deinit), F("get_factory", \.get_factory),
    ]
    static let factory: [F<termhost_feature_factory_t>] = [
        F("struct_size", \.struct_size), F("count", \.count), F("get_descriptor", \.get_descriptor), F("create", \.create),
    ]
    static let descriptor: [F<termhost_feature_descriptor_t>] = [
        F("struct_size", \.struct_size), F("id", \.id), F("version", \.version), F("display_name", \.display_name),
        F("description", \.description), F("order", \.order), F("scope", \.scope), F("after", \.after), F("before", \.before),
        F("requires_features", \.requires_features), F("requires_services", \.requires_services),
        F("provides_services", \.provides_services), F("commands", \.commands),
    ]
    static let command: [F<termhost_command_descriptor_t>] = [
        F("struct_size", \.struct_size), F("name", \.name), F("summary", \.summary), F("usage", \.usage),
    ]
    /// Added in ABI 1.3 with all its members, so every one is needed.
    static let tool: [F<termhost_tool_descriptor_t>] = [
        F("struct_size", \.struct_size), F("name", \.name), F("description", \.description),
        F("input_schema", \.input_schema), F("flags", \.flags), F("run_modes", \.run_modes),
    ]
    static let feature: [F<termhost_feature_t>] = [
        F("struct_size", \.struct_size), F("feature_data", \.feature_data), F("activate", \.activate),
        F("scene_attached", \.scene_attached), F("scene_detached", \.scene_detached), F("background", \.background),
        F("foreground", \.foreground), F("expire", \.expire), F("shutdown", \.shutdown), F("destroy", \.destroy),
        F("get_service", \.get_service), F("run_command", \.run_command),
    ]

    /// "plugin 'org.x': termhost_feature_t is 40 bytes, too small for 'shutdown' (ABI 1.0 needs 96)",
    /// or nil when the instance a factory's create() returned has every 1.0 member.
    public static func featureProblem(_ raw: UnsafePointer<termhost_feature_t>, plugin: String) -> String? {
        TermhostStruct.problem("termhost_feature_t", structSize: raw.pointee.struct_size, fields: feature)
            .map { "\(who(plugin)): \($0)" }
    }

    /// "plugin 'org.x'" for an ID, the label itself for a record's label ("plugin 'org.x' (/dir)").
    static func who(_ source: String) -> String { source.hasPrefix("plugin ") ? source : "plugin '\(source)'" }
}
