import TermhostRegistry
import TermhostSDK

/// What the probe child learned from running a plugin's entry, init and factory: the plugin's
/// own idea of its ID, version, ABI and features. Compared with the manifest before loading.
public struct ProbeReport: Sendable, Equatable, Codable {
    public var pluginID: String
    public var pluginVersion: String
    public var abi: [UInt32]
    public var features: [PluginManifest.Feature]
    /// Measured in the probe child: dlopen plus entry lookup, and init().
    public var loadMilliseconds: Double?
    public var initMilliseconds: Double?

    public init(pluginID: String, pluginVersion: String, abi: [UInt32], features: [PluginManifest.Feature],
                loadMilliseconds: Double? = nil, initMilliseconds: Double? = nil) {
        self.pluginID = pluginID
        self.pluginVersion = pluginVersion
        self.abi = abi
        self.features = features
        self.loadMilliseconds = loadMilliseconds
        self.initMilliseconds = initMilliseconds
    }

    /// The first difference between the manifest and what the library reported, or nil.
    public func mismatch(with manifest: PluginManifest) -> LoadFailure? {
        if pluginID != manifest.id {
            return .entryMismatch(field: "id", manifest: manifest.id, library: pluginID)
        }
        if pluginVersion != manifest.version {
            return .entryMismatch(field: "version", manifest: manifest.version, library: pluginVersion)
        }
        if abi.count >= 2, "\(abi[0]).\(abi[1])" != manifest.abi {
            return .abiDeclaredWrong(manifest: manifest.abi, library: "\(abi[0]).\(abi[1])")
        }
        let mine = manifest.features.map(\.id.rawValue).sorted(), theirs = features.map(\.id.rawValue).sorted()
        if mine != theirs {
            return .entryMismatch(field: "features", manifest: mine.joined(separator: ", "),
                                  library: theirs.joined(separator: ", "))
        }
        for declared in manifest.features {
            let actual = features.first { $0.id == declared.id }!
            func same<T: Equatable>(_ name: String, _ a: T, _ b: T, _ show: (T) -> String) -> LoadFailure? {
                a == b ? nil : .entryMismatch(field: "\(name) of feature \(declared.id)", manifest: show(a), library: show(b))
            }
            let list: ([String]) -> String = { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") }
            if let f = same("version", declared.version, actual.version, { $0 })
                ?? same("scope", declared.scope ?? .process, actual.scope ?? .process, \.description)
                ?? same("order", declared.order ?? 0, actual.order ?? 0, { String($0) })
                ?? same("requires", (declared.requires ?? []).map(\.rawValue), (actual.requires ?? []).map(\.rawValue), list)
                ?? same("requiresServices", declared.requiresServices ?? [], actual.requiresServices ?? [], list)
                ?? same("providesServices", declared.providesServices ?? [], actual.providesServices ?? [], list)
                ?? same("commands", (declared.commands ?? []).map(\.name), (actual.commands ?? []).map(\.name), list)
                ?? same("tools", (declared.tools ?? []).map(\.name), (actual.tools ?? []).map(\.name), list)
                ?? same("concurrentCommands", declared.concurrentCommands ?? false, actual.concurrentCommands ?? false, { String($0) }) {
                return f
            }
            // Same names: a tool whose description, schema, flags or modes differ is named.
            let mine = declared.tools ?? [], theirs = actual.tools ?? []
            if let changed = zip(mine, theirs).first(where: { $0 != $1 }) {
                return .entryMismatch(field: "declaration of tool '\(changed.0.name)' of feature \(declared.id)",
                                      manifest: Self.summary(changed.0), library: Self.summary(changed.1))
            }
            if let f = ActionCheck.mismatch(declared.actions ?? [], actual.actions ?? [], feature: declared.id.rawValue) { return f }
        }
        return nil
    }

    /// A tool's declaration on one line, to show both sides of a mismatch.
    static func summary(_ t: ToolDescriptor) -> String {
        "\(t.readOnly ? "read-only" : "state-changing")\(t.parallelSafe ? ", parallel-safe" : ""), modes "
            + t.modes.map(\.rawValue).joined(separator: "+") + ", input_schema \(t.inputSchema), description \(JSONText.quoted(t.description))"
    }
}

extension PluginManifest.Feature {
    public init(_ d: FeatureDescriptor) {
        self.init(id: d.id, version: d.version, displayName: d.displayName, summary: d.summary, order: d.order,
                  scope: d.scope, after: d.after, before: d.before, requires: d.requiresFeatures,
                  requiresServices: d.requiresServices, providesServices: d.providesServices, commands: d.commands,
                  tools: d.tools.isEmpty ? nil : d.tools, actions: d.actions.isEmpty ? nil : d.actions,
                  concurrentCommands: d.concurrentCommands ? true : nil)
    }
}
