/// Orders features deterministically: an edge a -> b means "a starts before b" (from `before`,
/// `after`, hard `requiresFeatures`, and `requiresServices` to the feature that
/// `providesServices` it: a consumer activated before its provider would look the service up
/// and get NULL); among features that are free to start, the smaller
/// order key goes first and ties are broken by ID. Edges to absent features are ignored.
public enum OrderResolver {
    public struct Cycles: Error, Equatable { public let members: [[FeatureID]] }

    public static func order(_ features: [FeatureDescriptor]) -> Result<[FeatureID], Cycles> {
        let byID = Dictionary(uniqueKeysWithValues: features.map { ($0.id, $0) })
        var successors: [FeatureID: Set<FeatureID>] = [:]
        var indegree: [FeatureID: Int] = Dictionary(uniqueKeysWithValues: features.map { ($0.id, 0) })
        func edge(_ a: FeatureID, _ b: FeatureID) {
            guard byID[a] != nil, byID[b] != nil else { return }
            if successors[a, default: []].insert(b).inserted { indegree[b, default: 0] += 1 }
        }
        // The provider of each service: the registry has already refused a second enabled
        // provider, but should two reach here, the one that would start first (order, ID) wins,
        // as it does for the lookup.
        var provider: [String: FeatureID] = [:]
        for f in features.sorted(by: { ($0.order, $0.id) < ($1.order, $1.id) }) {
            for service in f.providesServices where provider[service] == nil { provider[service] = f.id }
        }
        for f in features {
            for dep in f.after + f.requiresFeatures { edge(dep, f.id) }
            for later in f.before { edge(f.id, later) }
            // A feature that requires a service it provides itself needs no edge (and a
            // self-edge would read as a cycle).
            for service in f.requiresServices { if let p = provider[service], p != f.id { edge(p, f.id) } }
        }
        func key(_ id: FeatureID) -> (Int32, String) { (byID[id]!.order, id.rawValue) }
        var ready = indegree.filter { $0.value == 0 }.map(\.key)
        var out: [FeatureID] = []
        while !ready.isEmpty {
            ready.sort { key($0) > key($1) }      // smallest last, popped first
            let next = ready.removeLast()
            out.append(next)
            for s in successors[next, default: []] {
                indegree[s]! -= 1
                if indegree[s] == 0 { ready.append(s) }
            }
        }
        if out.count == features.count { return .success(out) }
        let left = Set(features.map(\.id)).subtracting(out)
        return .failure(Cycles(members: stronglyConnected(left, successors)))
    }

    /// Tarjan's algorithm restricted to `nodes`; returns the components that are real cycles
    /// (more than one member, or a self-edge), each sorted, the list sorted by first member.
    static func stronglyConnected(_ nodes: Set<FeatureID>, _ successors: [FeatureID: Set<FeatureID>]) -> [[FeatureID]] {
        var index = 0
        var indices: [FeatureID: Int] = [:], low: [FeatureID: Int] = [:]
        var stack: [FeatureID] = [], onStack = Set<FeatureID>()
        var result: [[FeatureID]] = []
        func visit(_ v: FeatureID) {
            indices[v] = index; low[v] = index; index += 1
            stack.append(v); onStack.insert(v)
            for w in successors[v, default: []].sorted() where nodes.contains(w) {
                if indices[w] == nil { visit(w); low[v] = min(low[v]!, low[w]!) }
                else if onStack.contains(w) { low[v] = min(low[v]!, indices[w]!) }
            }
            if low[v] == indices[v] {
                var component: [FeatureID] = []
                while true {
                    let w = stack.removeLast(); onStack.remove(w); component.append(w)
                    if w == v { break }
                }
                if component.count > 1 || successors[v, default: []].contains(v) {
                    result.append(component.sorted())
                }
            }
        }
        for v in nodes.sorted() where indices[v] == nil { visit(v) }
        return result.sorted { $0[0] < $1[0] }
    }
}
