import TermhostRegistry

/// One feature as `termhost features` shows it, in start order.
struct FeatureView: Encodable {
    var position: Int?
    var id: String
    var version: String
    var state: String
    var reason: String?
    var scope: String
    var order: Int32
    var source: String
    var commands: [String]

    init(_ f: ResolvedFeature, position: Int?) {
        self.position = position
        id = f.descriptor.id.rawValue
        version = f.descriptor.version
        state = f.state.label
        reason = f.state.reason
        scope = f.descriptor.scope.description
        order = f.descriptor.order
        source = f.descriptor.source
        commands = f.descriptor.commands.map(\.name)
    }

    static func all(_ r: Resolution) -> [FeatureView] {
        var n = 0
        return r.features.map { f in
            if f.state == .enabled { n += 1; return FeatureView(f, position: n) }
            return FeatureView(f, position: nil)
        }
    }
}
