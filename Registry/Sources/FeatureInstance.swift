/// Which scene and workspace an instance belongs to; 0 means none.
public struct ScopeContext: Sendable, Hashable {
    public var scene: UInt64
    public var workspace: UInt64
    public var hasTerminal: Bool

    public init(scene: UInt64 = 0, workspace: UInt64 = 0, hasTerminal: Bool = false) {
        self.scene = scene
        self.workspace = workspace
        self.hasTerminal = hasTerminal
    }

    public static let process = ScopeContext()
}

/// A live feature instance as the lifecycle manager drives it (NOTES §5). Plugin features are
/// adapted from `termhost_feature_t`; tests use plain Swift classes.
/// Every method is called on the host's lifecycle thread.
public protocol FeatureInstance: AnyObject {
    /// Starts the instance; a thrown error marks the feature failed and skips its dependents.
    func activate(_ context: ScopeContext) throws
    func sceneAttached(_ context: ScopeContext)
    func sceneDetached(_ context: ScopeContext)
    func background()
    func foreground()
    /// The background grace ran out: retire live work (transports), keep the intent to resume.
    func expire()
    /// Stop work; called once, bounded by the host.
    func shutdown()
    /// Release the instance; skipped for an instance whose shutdown overran the bound.
    func destroy()
}

/// Creates instances of the features it registered, one per scope (process, scene, workspace).
public protocol FeatureFactory: Sendable {
    func makeInstance(of descriptor: FeatureDescriptor, in context: ScopeContext) throws -> any FeatureInstance
}

/// A failure reported by a feature itself (its own message, verbatim).
public struct FeatureFailure: Error, Sendable, CustomStringConvertible {
    public var feature: FeatureID
    public var message: String

    public init(feature: FeatureID, message: String) {
        self.feature = feature
        self.message = message
    }

    public var description: String { "feature '\(feature)' failed: \(message)" }
}
