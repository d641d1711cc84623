/// How each policy settles a plan's conflicts, and the numbered names of keep-both.
extension ConflictPolicy {
    /// Settles every conflict of the plan; throws for .fail, naming the existing targets.
    /// `exists` answers whether a candidate name is taken (local stat or remote listing).
    func apply(to plan: inout TransferPlan, exists: (String) throws(SFTPError) -> Bool) throws(SFTPError) {
        guard !plan.conflicts.isEmpty else { return }
        let conflicting = Set(plan.conflicts)
        let targets = plan.conflicts.map { plan.jobs[$0].targetDisplay }
        switch self {
        case .fail:
            let shown = targets.prefix(5).joined(separator: ", ") + (targets.count > 5 ? ", ..." : "")
            throw SFTPError(.refused, "sftp: \(targets.count) target\(targets.count == 1 ? "" : "s") already exist\(targets.count == 1 ? "s" : ""): \(shown); choose --overwrite, --skip or --keep-both")
        case .overwrite:
            for i in conflicting { plan.jobs[i].overwrite = true }
        case .skip:
            plan.skipped += plan.conflicts.map { (plan.jobs[$0].display, "\(plan.jobs[$0].targetDisplay) exists") }
            plan.jobs = plan.jobs.enumerated().filter { !conflicting.contains($0.offset) }.map(\.element)
        case .keepBoth:
            // Names other jobs of this plan will create are taken too: two jobs must never
            // share a target (and so a partial file).
            var taken = Set(plan.jobs.map(\.targetPath))
            for i in conflicting {
                let original = plan.jobs[i].targetPath
                var n = 1
                var candidate = ConflictPolicy.numbered(original, n)
                while try exists(candidate) || taken.contains(candidate) { n += 1; candidate = ConflictPolicy.numbered(original, n) }
                taken.insert(candidate)
                plan.jobs[i].setTarget(candidate)
                plan.jobs[i].resume = false
            }
        }
        plan.conflicts = []
    }

    /// "dir/report.pdf" -> "dir/report (2).pdf"; names without an extension get the suffix.
    static func numbered(_ path: String, _ n: Int) -> String {
        let name = path.lastComponent
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let renamed = dot.map { "\(name[..<$0]) (\(n))\(name[$0...])" } ?? "\(name) (\(n))"
        return path.parentPath.appendingPath(renamed)
    }
}

extension FileJob {
    /// The path this job creates, local or remote.
    var targetPath: String { direction == .download ? localPath : remotePath }
    /// For messages and questions: control characters in the names shown, never sent.
    var targetDisplay: String { direction == .download ? localPath.shown : "\(host):\(remotePath.shown)" }

    mutating func setTarget(_ path: String) {
        if direction == .download { localPath = path } else { remotePath = path }
    }
}
