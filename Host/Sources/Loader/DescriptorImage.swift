import Glibc

/// A shared library loaded from a descriptor the loader already checked: dlopen of
/// `/proc/self/fd/N`, so that the bytes checked are the bytes mapped (Preflight). Images are
/// opened with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE and never closed (see PluginEntry).
enum DescriptorImage {
    /// The dlopen handle of the library open on `fd`. `displayPath` replaces the
    /// `/proc/self/fd/N` name in dlerror() text.
    static func open(_ fd: Int32, displayPath: String) throws(LoadFailure) -> UnsafeMutableRawPointer {
        // The dynamic linker recognises an already-loaded library by the name it was opened
        // with, so "/proc/self/fd/5" would return an earlier image loaded through a descriptor
        // that also had number 5. Pick a descriptor number whose name was never loaded.
        var loadFD = fd
        var spare: [Int32] = []
        defer { spare.forEach { close($0) } }
        // NOLOAD also matches the same file by device and inode; after a few tries it is that
        // file itself that is loaded already, and reusing its image is right.
        while spare.count < 8, dlopen("/proc/self/fd/\(loadFD)", RTLD_NOW | RTLD_NOLOAD) != nil {
            // (The NOLOAD reference is deliberately not released: images are never closed.)
            loadFD = fcntl(fd, F_DUPFD_CLOEXEC, loadFD + 1)
            guard loadFD >= 0 else { throw .cannotOpen(path: displayPath, reason: "fcntl(F_DUPFD): \(String(cString: strerror(errno)))") }
            spare.append(loadFD)
        }
        let name = "/proc/self/fd/\(loadFD)"
        _ = dlerror()
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw .cannotOpen(path: displayPath, reason: reason.replacingOccurrences(of: name, with: displayPath))
        }
        return handle
    }
}
