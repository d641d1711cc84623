import Glibc
import TermhostSDK

/// What a get or put will do, worked out before a byte moves: the directories to create (empty
/// ones included), the files to copy, what was skipped and why, and which targets already
/// exist (the conflicts the policy must settle).
struct TransferPlan: Sendable {
    var direction: FileJob.Direction
    var directories: [String] = []      // local (download) or remote (upload), parents first
    var jobs: [FileJob] = []
    var conflicts: [Int] = []           // indices into jobs
    var notices: [String] = []
    /// Files left alone (already complete, or the conflict policy said skip), with the reason.
    var skipped: [(display: String, reason: String)] = []
    /// What the server listed that is never written (a name that is a path or a control
    /// sequence, a tree past the depth limit, a directory a symbolic link replaced), with the
    /// message that names it. Counted as failed files; the rest of the plan goes on.
    var refused: [(display: String, message: String)] = []
    /// A download's trusted local directory (see FileJob.localRoot); directories are relative to it.
    var localRoot = ""
    /// Entries listed so far by a recursive download (bounded by RemoteLimits.entries).
    var listed = 0
    var bytes: UInt64 = 0
    /// Existing target names of an upload, per remote directory (one listing, not a stat each).
    var remoteNames: [String: Set<String>] = [:]
}

/// Builds plans by walking the source. Runs on the connection's executor.
struct Planner {
    let fs: RemoteFS
    let host: String
    let recursive: Bool
    let resume: Bool

    // MARK: download

    func download(_ remote: String, to local: String) throws(SFTPError) -> TransferPlan {
        var plan = TransferPlan(direction: .download)
        let source = try fs.stat(remote)
        let into = LocalFile.stat(local).map { FileType.of($0) == FileType.directory } ?? false
        var name = remote.lastComponent
        if into, name.isEmpty || name == "." || name == ".." {
            // "get -r host: dir" or "get host:a/.. dir": the name is the one the server resolves.
            name = try fs.realpath(remote).lastComponent
        }
        if into, let why = RemoteName.refusal(name) {
            throw SFTPError(.refused, "sftp: \(host):\(remote.shown): cannot be saved under its name '\(name.shown)': \(why); name the local target")
        }
        let target = into ? local.appendingPath(name) : local
        // Everything below this directory comes from the server's names, and is created
        // relative to it without following symbolic links.
        plan.localRoot = into ? local : local.parentPath
        if source.isDirectory {
            guard recursive else { throw SFTPError(.failed, "sftp: \(host):\(remote.shown) is a directory (use -r)") }
            try walkRemote(remote, target, display: name, depth: 0, &plan)
        } else {
            addDownload(remote, target, source, display: name, &plan)
        }
        return plan
    }

    private func walkRemote(_ dir: String, _ local: String, display: String, depth: Int, _ plan: inout TransferPlan) throws(SFTPError) {
        if let st = LocalFile.stat(local, follow: false) {
            if FileType.of(st) == FileType.symlink {
                // Planted or not, a link would send the server's files wherever it points.
                plan.refused.append((display.shown, "sftp: \(local.shown) is a symbolic link; not followed, nothing under \(host):\(dir.shown) was downloaded"))
                return
            }
            if FileType.of(st) != FileType.directory { throw SFTPError(.failed, "sftp: \(local.shown) exists and is not a directory") }
        }
        plan.directories.append(local)
        let budget = RemoteLimits.entries - plan.listed
        let entries = try fs.list(dir, upTo: budget)
        guard entries.count <= budget else {
            throw SFTPError(.failed, "sftp: \(host):\(dir.shown): the tree has more than \(RemoteLimits.entries) entries (the limit of one recursive get); nothing was downloaded, get its parts one by one")
        }
        plan.listed += entries.count
        for entry in entries {
            let rel = display.appendingPath(entry.name)
            if let why = entry.validUTF8 ? RemoteName.refusal(entry.name) : "it is not valid UTF-8" {
                plan.refused.append((rel.shown, "sftp: \(host):\(dir.shown): refused the name '\(entry.name.shown)' the server listed: \(why); nothing was written for it"))
                continue
            }
            let path = dir.appendingPath(entry.name), to = RemoteName.joined(local, entry.name)
            if entry.isDirectory {
                guard depth < RemoteLimits.depth else {
                    plan.refused.append((rel.shown, "sftp: \(host):\(path.shown): deeper than \(RemoteLimits.depth) directory levels below the source (the limit of a recursive get); not downloaded"))
                    continue
                }
                try walkRemote(path, to, display: rel, depth: depth + 1, &plan)
            } else if entry.isRegular {
                addDownload(path, to, entry, display: rel, &plan)
            } else if entry.isSymlink {
                // Never followed in a tree walk: a link to a parent would loop forever.
                plan.notices.append("skipped symbolic link \(host):\(path.shown)")
            } else {
                plan.notices.append("skipped \(host):\(path.shown): not a regular file")
            }
        }
    }

    private func addDownload(_ remote: String, _ local: String, _ source: RemoteEntry, display: String, _ plan: inout TransferPlan) {
        var job = FileJob(direction: .download, host: host, remotePath: remote, localPath: local, display: display.shown)
        job.resume = resume
        job.size = source.size ?? 0
        job.localRoot = plan.localRoot
        if let st = LocalFile.stat(local, follow: false) {
            if resume, UInt64(st.st_size) == source.size, UInt64(st.st_mtim.tv_sec) == source.mtime {
                plan.skipped.append((display.shown, "\(local.shown) is already complete"))
                return
            }
            plan.conflicts.append(plan.jobs.count)
        }
        // Saturating: a size is the server's word, and a hostile one must not trap the sum.
        let (sum, overflow) = plan.bytes.addingReportingOverflow(source.size ?? 0)
        plan.bytes = overflow ? .max : sum
        plan.jobs.append(job)
    }

    // MARK: upload

    func upload(_ local: String, to remote: String) throws(SFTPError) -> TransferPlan {
        var plan = TransferPlan(direction: .upload)
        guard let st = LocalFile.stat(local) else { throw SFTPError.local(local, "cannot upload") }
        let existing = try fs.statIfExists(remote)
        let named = existing?.isDirectory == true ? remote.appendingPath(local.lastComponent) : remote
        // Checkpoints are keyed by the remote path, so it is the server's absolute form: the
        // shell (absolute paths) and the command line (as typed) name the same transfer.
        let target = try fs.canonical(named)
        if FileType.of(st) == FileType.directory {
            guard recursive else { throw SFTPError(.failed, "sftp: \(local.shown) is a directory (use -r)") }
            try walkLocal(local, target, display: local.lastComponent, &plan)
        } else {
            plan.remoteNames[target.parentPath] = try names(in: target.parentPath, only: target.lastComponent)
            addUpload(local, target, st, display: local.lastComponent, &plan)
        }
        return plan
    }

    /// Existing names in a remote directory: one listing, or one stat when only `only` matters.
    private func names(in dir: String, only: String? = nil) throws(SFTPError) -> Set<String> {
        if let only { return try fs.statIfExists(dir.appendingPath(only), follow: false) != nil ? [only] : [] }
        guard let entry = try fs.statIfExists(dir) else { return [] }
        guard entry.isDirectory else { throw SFTPError(.failed, "sftp: \(host):\(dir.shown) exists and is not a directory") }
        return Set(try fs.list(dir).map(\.name))
    }

    private func walkLocal(_ dir: String, _ remote: String, display: String, _ plan: inout TransferPlan) throws(SFTPError) {
        plan.directories.append(remote)
        plan.remoteNames[remote] = try names(in: remote)
        guard let d = opendir(dir) else { throw SFTPError.local(dir, "cannot list") }
        defer { closedir(d) }
        var entries: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { entries.append(name) }
        }
        for name in entries.sorted() {
            let path = dir.appendingPath(name), rel = display.appendingPath(name)
            guard let st = LocalFile.stat(path, follow: false) else { plan.notices.append("skipped \(path.shown): vanished"); continue }
            switch FileType.of(st) {
            case FileType.directory: try walkLocal(path, remote.appendingPath(name), display: rel, &plan)
            case FileType.regular: addUpload(path, remote.appendingPath(name), st, display: rel, &plan)
            case FileType.symlink: plan.notices.append("skipped symbolic link \(path.shown)")
            default: plan.notices.append("skipped \(path.shown): not a regular file")
            }
        }
    }

    private func addUpload(_ local: String, _ remote: String, _ st: stat, display: String, _ plan: inout TransferPlan) {
        var job = FileJob(direction: .upload, host: host, remotePath: remote, localPath: local, display: display.shown)
        job.resume = resume
        job.size = UInt64(max(st.st_size, 0))
        if plan.remoteNames[remote.parentPath]?.contains(remote.lastComponent) == true {
            if resume, let done = try? fs.stat(remote), done.size == UInt64(st.st_size), done.mtime == UInt64(st.st_mtim.tv_sec) {
                plan.skipped.append((display.shown, "\(host):\(remote.shown) is already complete"))
                return
            }
            plan.conflicts.append(plan.jobs.count)
        }
        plan.bytes = Pacing.saturatingAdd(plan.bytes, UInt64(max(st.st_size, 0)))
        plan.jobs.append(job)
    }
}
