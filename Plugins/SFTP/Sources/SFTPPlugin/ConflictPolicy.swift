/// What to do when a target name already exists: replace it (atomically), leave it and skip the
/// file, keep both (the new file gets "name (1).ext"), or stop before anything moves (the
/// default when nobody can be asked).
enum ConflictPolicy: String, Sendable, CaseIterable, Codable {
    case overwrite, skip, keepBoth = "keep-both", fail
}
