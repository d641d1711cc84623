import Glibc

/// The upload window's bytes, in a ring whose memory is mapped twice in a row, so that any
/// `count` ≤ `size` bytes from any position read and write as one contiguous span, across the
/// ring's end too. Why: `libssh2_sftp_write` must be passed the unacknowledged bytes again as
/// one span; a plain buffer had to move them to its front once per window, a copy of every
/// byte sent (about 1 M instructions per MiB, a seventh of an AES-GCM upload's client cost).
///
/// When the system refuses the memory (`shm_open`, `posix_fallocate`, `mmap`), `init` returns
/// nil and the caller keeps a plain buffer.
final class UploadRing {
    let size: Int
    private let base: UnsafeMutableRawPointer

    /// A ring of at least `minimumSize` bytes, rounded up to whole pages.
    init?(minimumSize: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = (minimumSize + page - 1) / page * page
        // A shared-memory object without a name once made (memfd_create is not in Swift's Glibc).
        let name = "/termhost-upload-\(getpid())-\(UInt64.random(in: 0 ... .max))"
        let fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        shm_unlink(name)
        defer { close(fd) }
        // Allocated now, not just sized (ftruncate): a write to a page that a full /dev/shm
        // (Docker's is 64 MB) cannot back raises SIGBUS, which ends the process.
        guard posix_fallocate(fd, 0, off_t(size)) == 0 else { return nil }
        // Reserve both halves at once, then map the same file over each.
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        guard let reserved = mmap(nil, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) as UnsafeMutableRawPointer?,
              reserved != failed else { return nil }
        for half in 0..<2 {
            let at = reserved + half * size
            guard mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) as UnsafeMutableRawPointer? == at else {
                munmap(reserved, 2 * size)
                return nil
            }
        }
        self.size = size
        self.base = reserved
    }

    deinit { munmap(base, 2 * size) }

    /// Where the byte at stream position `position` is; `size` bytes from there are contiguous.
    func at(_ position: UInt64) -> UnsafeMutableRawPointer { base + Int(position % UInt64(size)) }
}
