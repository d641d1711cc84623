import Glibc

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
        let target = into ? local.appendingPath(remote.lastComponent) : local
        if source.isDirectory {
            guard recursive else { throw SFTPError(.failed, "sftp: \(host):\(remote) is a directory (use -r)") }
            try walkRemote(remote, target, display: remote.lastComponent, &plan)
        } else {
            addDownload(remote, target, source, display: remote.lastComponent, &plan)
        }
        return plan
    }

    private func walkRemote(_ dir: String, _ local: String, display: String, _ plan: inout TransferPlan) throws(SFTPError) {
        if let st = LocalFile.stat(local), FileType.of(st) != FileType.directory {
            throw SFTPError(.failed, "sftp: \(local) exists and is not a directory")
        }
        plan.directories.append(local)
        for entry in try fs.list(dir) {
            let path = dir.appendingPath(entry.name), rel = display.appendingPath(entry.name)
            if entry.isDirectory {
                try walkRemote(path, local.appendingPath(entry.name), display: rel, &plan)
            } else if entry.isRegular {
                addDownload(path, local.appendingPath(entry.name), entry, display: rel, &plan)
            } else if entry.isSymlink {
                // Never followed in a tree walk: a link to a parent would loop forever.
                plan.notices.append("skipped symbolic link \(host):\(path)")
            } else {
                plan.notices.append("skipped \(host):\(path): not a regular file")
            }
        }
    }

    private func addDownload(_ remote: String, _ local: String, _ source: RemoteEntry, display: String, _ plan: inout TransferPlan) {
        var job = FileJob(direction: .download, host: host, remotePath: remote, localPath: local, display: display)
        job.resume = resume
        if let st = LocalFile.stat(local, follow: false) {
            if resume, UInt64(st.st_size) == source.size, UInt64(st.st_mtim.tv_sec) == source.mtime {
                plan.skipped.append((display, "\(local) is already complete"))
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
            guard recursive else { throw SFTPError(.failed, "sftp: \(local) is a directory (use -r)") }
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
        guard entry.isDirectory else { throw SFTPError(.failed, "sftp: \(host):\(dir) exists and is not a directory") }
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
            guard let st = LocalFile.stat(path, follow: false) else { plan.notices.append("skipped \(path): vanished"); continue }
            switch FileType.of(st) {
            case FileType.directory: try walkLocal(path, remote.appendingPath(name), display: rel, &plan)
            case FileType.regular: addUpload(path, remote.appendingPath(name), st, display: rel, &plan)
            case FileType.symlink: plan.notices.append("skipped symbolic link \(path)")
            default: plan.notices.append("skipped \(path): not a regular file")
            }
        }
    }

    private func addUpload(_ local: String, _ remote: String, _ st: stat, display: String, _ plan: inout TransferPlan) {
        var job = FileJob(direction: .upload, host: host, remotePath: remote, localPath: local, display: display)
        job.resume = resume
        if plan.remoteNames[remote.parentPath]?.contains(remote.lastComponent) == true {
            if resume, let done = try? fs.stat(remote), done.size == UInt64(st.st_size), done.mtime == UInt64(st.st_mtim.tv_sec) {
                plan.skipped.append((display, "\(host):\(remote) is already complete"))
                return
            }
            plan.conflicts.append(plan.jobs.count)
        }
        plan.bytes += UInt64(st.st_size)
        plan.jobs.append(job)
    }
}
