import Glibc

/// Local files of a download, created relative to directory descriptors so that nothing below
/// the directory the user named follows a symbolic link.
///
/// Why: the names below that directory are the server's, and another process (or an earlier,
/// hostile download) can plant `target/dir -> /etc` between the plan and the write. A path
/// string would follow such a link; here every directory on the way is opened with
/// O_NOFOLLOW | O_DIRECTORY, and files, directories, links and renames are made with
/// openat, mkdirat, linkat and renameat in the last one. The directory the user named is
/// trusted as given (it may itself be a link, as for cp or OpenSSH's sftp).
struct LocalTree {
    /// The directory holding the target: an open descriptor, closed by `close()`.
    let fd: Int32
    /// The path of that directory, for messages.
    let path: String

    /// Opens the directory that holds `target`, walking from `root` one component at a time
    /// without following links. `target` must be `root` itself or below it.
    static func parent(of target: String, root: String) throws(SFTPError) -> LocalTree {
        try open(target.parentPath, root: root)
    }

    /// Opens `dir` (root or below it) without following a link below root.
    static func open(_ dir: String, root: String) throws(SFTPError) -> LocalTree {
        // The root as the user named it.
        var fd = Glibc.open(root.isEmpty ? "." : root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SFTPError.local(root, "cannot open directory") }
        guard dir != root else { return LocalTree(fd: fd, path: root) }
        // Bytes, not Characters: "/" followed by a combining mark is one Character, and a
        // Character split would hand openat a name with a "/" in it (several steps, unchecked).
        let prefix = root.utf8.last == 0x2f ? root : root + "/"
        guard dir.utf8.starts(with: prefix.utf8) else {
            Glibc.close(fd)
            throw SFTPError(.refused, "sftp: \(dir.shown) is not inside \(root.shown); not written")
        }
        var walked = root
        for name in String(decoding: dir.utf8.dropFirst(prefix.utf8.count), as: UTF8.self).pathComponents {
            walked = walked.appendingPath(name)
            // "." and ".." never come from a plan (RemoteName refuses them); refused here too,
            // so this function alone keeps a walk inside root.
            guard name != ".", name != ".." else {
                Glibc.close(fd)
                throw SFTPError(.refused, "sftp: \(walked.shown): '..' or '.' in a local path below \(root.shown); not written")
            }
            let next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            Glibc.close(fd)
            guard next >= 0 else {
                if code == ELOOP || code == ENOTDIR, LocalFile.isSymlink(walked) {
                    throw SFTPError(.refused, "sftp: \(walked.shown) is a symbolic link; not followed, nothing was written through it")
                }
                throw SFTPError.local(walked, "cannot open directory", errno: code)
            }
            fd = next
        }
        return LocalTree(fd: fd, path: dir)
    }

    func close() { Glibc.close(fd) }

    /// mkdirat: an existing directory is fine (a link is not: the walk below refuses it).
    func makeDirectory(_ name: String, mode: mode_t = 0o755) throws(SFTPError) {
        if mkdirat(fd, name, mode) != 0 && errno != EEXIST {
            throw SFTPError.local(path.appendingPath(name), "cannot create directory")
        }
    }

    /// openat with O_NOFOLLOW: a link planted under the name is refused (ELOOP), never opened.
    func openFile(_ name: String, flags: Int32, mode: mode_t = 0o600, what: String) throws(SFTPError) -> Int32 {
        let fd = openat(self.fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw SFTPError(.refused, "sftp: \(path.appendingPath(name).shown) is a symbolic link; not followed, nothing was written through it") }
            throw SFTPError.local(path.appendingPath(name), what, errno: code)
        }
        return fd
    }

    func stat(_ name: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// unlinkat; true when the name is gone (removed, or was not there).
    @discardableResult
    func remove(_ name: String) -> Bool { unlinkat(fd, name, 0) == 0 || errno == ENOENT }

    /// Moves a finished partial file into place in this directory: renameat replaces
    /// atomically when allowed; otherwise linkat, which refuses an existing name (a link
    /// included: it is never followed), so a file that appeared meanwhile is never clobbered.
    func commit(_ partial: String, to name: String, replace: Bool) throws(SFTPError) {
        let from = path.appendingPath(partial), to = path.appendingPath(name)
        if replace {
            guard renameat(fd, partial, fd, name) == 0 else { throw SFTPError.local(to, "cannot rename \(from.shown) to") }
            return
        }
        if linkat(fd, partial, fd, name, 0) == 0 { unlinkat(fd, partial, 0); return }
        if errno == EEXIST { throw SFTPError(.refused, "sftp: \(to.shown) appeared during the transfer; the download is kept as \(from.shown)") }
        // File systems without hard links: check, then rename.
        guard stat(name) == nil, renameat(fd, partial, fd, name) == 0 else { throw SFTPError.local(to, "cannot rename \(from.shown) to") }
    }
}

extension LocalFile {
    static func isSymlink(_ path: String) -> Bool { stat(path, follow: false).map { FileType.of($0) == FileType.symlink } ?? false }
}
