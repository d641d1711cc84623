#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText; the fuzz targets compile VisibleText.swift in instead
#endif

/// Everything that can be wrong with a set of features, a plugin set or a policy. Each case
/// names the culprits and where they came from, so an operator can fix the right file.
public enum RegistryError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalidID(String)
    case duplicateFeature(FeatureID, first: String, second: String)
    case duplicateCommand(String, kept: FeatureID, dropped: FeatureID)
    case invalidCommandName(String, feature: FeatureID)
    case reservedCommand(String, feature: FeatureID)
    case toolRefused(String, feature: FeatureID, reason: String)
    case duplicateTool(String, kept: FeatureID, dropped: FeatureID)
    case commandOfPinnedPlugin(String, feature: FeatureID, source: String, pinnedFeature: FeatureID)
    case cycle([FeatureID])
    case missingDependency(FeatureID, needs: FeatureID)
    case disabledDependency(FeatureID, needs: FeatureID)
    case unavailableDependency(FeatureID, needs: FeatureID)
    case missingService(FeatureID, service: String)
    case serviceUnavailable(FeatureID, service: String, reason: String)
    case unknownFeatureInPolicy(FeatureID, source: String)
    case requiredFeatureNotAvailable(FeatureID, source: String, reason: String)
    case userCannotEnable(FeatureID, source: String)
    case settingNotOverridable(FeatureID, key: String, source: String)
    case malformedJSON(file: String, line: Int, column: Int, detail: String)
    case invalidDocument(file: String, field: String, detail: String)
    case unreadableFile(file: String, reason: String)
    case notRegularFile(file: String, kind: String)
    case fileTooLarge(file: String, size: Int64, cap: Int)
    case featureOutsideNamespace(FeatureID, plugin: String, owner: String?)
    case serviceOutsideNamespace(String, plugin: String)
    case serviceConflict(String, feature: FeatureID, providedBy: FeatureID)

    public var description: String {
        switch self {
        case .invalidID(let raw) where raw.utf8.count > FeatureID.maxBytes:
            // A long ID is refused for its length, and said so: calling it a character-set
            // violation sent authors looking for a bad character that is not there.
            "invalid feature ID '\(RegistryError.abbreviated(raw))': \(raw.utf8.count) bytes, more than the \(FeatureID.maxBytes) a feature ID may have"
        case .invalidID(let raw):
            "invalid feature ID '\(raw)': expected reverse DNS such as 'org.example.feature' (lowercase letters, digits, '-' and '_')"
        case .duplicateFeature(let id, let first, let second):
            "feature '\(id)' is declared twice: by \(first) and by \(second); the second was not registered"
        case .duplicateCommand(let name, let kept, let dropped):
            "command '\(name)' is contributed by both '\(kept)' and '\(dropped)'; '\(kept)' keeps it"
        case .invalidCommandName(let name, let feature) where name.utf8.count > CommandDescriptor.maxNameBytes:
            "feature '\(feature)' contributes command '\(RegistryError.abbreviated(name))', whose name is \(name.utf8.count) bytes, more than the \(CommandDescriptor.maxNameBytes) a command name may have; it was dropped"
        case .invalidCommandName(let name, let feature):
            "feature '\(feature)' contributes command '\(name)', which is not a valid command name (lowercase letters, digits and '-'); it was dropped"
        case .reservedCommand(let name, let feature):
            "feature '\(feature)' contributes command '\(name)', which is a built-in termhost command; it was dropped"
        case .toolRefused(let name, let feature, let reason):
            "feature '\(feature)' offers tool '\(VisibleText.of(RegistryError.abbreviated(name)))', refused: \(reason)"
        case .duplicateTool(let name, let kept, let dropped):
            "tool '\(name)' is offered by both '\(kept)' and '\(dropped)'; '\(kept)' keeps it and the one of '\(dropped)' was refused"
        case .commandOfPinnedPlugin(let name, let feature, let source, let pinnedFeature):
            "feature '\(feature)' of \(source), which no plugin set pins, contributes command '\(name)', which pinned feature '\(pinnedFeature)' declares; refused, '\(pinnedFeature)' keeps it"
        case .cycle(let members):
            "dependency cycle between \(members.map { "'\($0)'" }.joined(separator: ", ")); none of them was created"
        case .missingDependency(let id, let needs):
            "feature '\(id)' requires feature '\(needs)', which no installed plugin provides"
        case .disabledDependency(let id, let needs):
            "feature '\(id)' requires feature '\(needs)', which is disabled"
        case .unavailableDependency(let id, let needs):
            "feature '\(id)' requires feature '\(needs)', which is not available"
        case .missingService(let id, let service):
            "feature '\(id)' requires service '\(service)', which no enabled feature provides"
        case .serviceUnavailable(let id, let service, let reason):
            "feature '\(id)' requires service '\(service)', which is unavailable: \(reason)"
        case .unknownFeatureInPolicy(let id, let source):
            "\(source) names feature '\(id)', which no installed plugin provides"
        case .requiredFeatureNotAvailable(let id, let source, let reason):
            "feature '\(id)' is required by \(source) but is not available: \(reason)"
        case .userCannotEnable(let id, let source):
            "\(source) enables feature '\(id)', but the operator's policy disabled it; the operator's choice stands"
        case .settingNotOverridable(let id, let key, let source):
            "\(source) sets '\(key)' of feature '\(id)', which the operator's policy does not let users override; ignored"
        case .malformedJSON(let file, let line, let column, let detail):
            "\(file):\(line):\(column): malformed JSON: \(detail)"
        case .invalidDocument(let file, let field, let detail):
            "\(file): \(field.isEmpty ? "" : "field '\(field)': ")\(detail)"
        case .unreadableFile(let file, let reason):
            "cannot read \(file): \(reason)"
        case .notRegularFile(let file, let kind):
            "\(file) is \(kind), not a regular file; refused"
        case .fileTooLarge(let file, let size, let cap):
            "\(file) is \(size) bytes, more than the \(BoundedFile.size(cap)) such a file may hold; refused"
        case .featureOutsideNamespace(let id, let plugin, let owner):
            "plugin '\(plugin)' declares feature '\(id)', which is outside its ID namespace"
                + (owner.map { " and belongs to plugin '\($0)'" } ?? "")
                + "; a plugin's feature IDs are its own ID or start with its ID and a dot ('\(plugin).…')"
        case .serviceOutsideNamespace(let service, let plugin):
            "plugin '\(plugin)' provides service '\(service)', which is outside its ID namespace; a plugin's service IDs start with its ID ('\(plugin).name/1') and the host's own (termhost.*) are reserved"
        case .serviceConflict(let service, let feature, let providedBy):
            "feature '\(feature)' provides service '\(service)', which feature '\(providedBy)' already provides; '\(providedBy)' keeps it and '\(feature)' was not started"
        }
    }

    /// The first 40 characters of a name too long to quote whole, and how it goes on.
    static func abbreviated(_ s: String) -> String { s.count > 40 ? String(s.prefix(40)) + "…" : s }
}
