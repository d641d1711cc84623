import TermhostRegistry

func fid(_ s: String) -> FeatureID { FeatureID(checked: s) }

func feature(_ id: String, order: Int32 = 0, after: [String] = [], before: [String] = [], requires: [String] = [],
             services: [String] = [], provides: [String] = [], commands: [String] = [],
             source: String? = nil) -> FeatureDescriptor {
    FeatureDescriptor(id: fid(id), order: order, after: after.map(fid), before: before.map(fid),
                      requiresFeatures: requires.map(fid), requiresServices: services, providesServices: provides,
                      commands: commands.map { CommandDescriptor(name: $0, summary: "") },
                      source: source ?? "plugin \(id)")
}

func registry(_ features: [FeatureDescriptor]) throws -> FeatureRegistry {
    var r = FeatureRegistry()
    for f in features { try r.register(f) }
    return r
}

extension Resolution {
    var enabledIDs: [String] { enabled.map(\.descriptor.id.rawValue) }
    func state(_ id: String) -> FeatureState? { feature(fid(id))?.state }
}
