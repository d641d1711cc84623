import Foundation
import Glibc
import TermhostRegistry
import TermhostSDK

/// Design: a plugin set may pin, besides a plugin's library, the private shared libraries it
/// loads (`libraries` in its entry: the staged libssh2 that the SSH and SFTP plugins share).
/// Such a library is verified like the plugin: opened once, and every check (regular file, who
/// may write it, ELF for the host's machine, sha256) reads that descriptor. What runs is that
/// descriptor too: `preload` dlopens `/proc/self/fd/N` before the plugin, and the dynamic linker
/// then satisfies the plugin's `DT_NEEDED` entry with the image already loaded under that soname
/// instead of searching the plugin's `RUNPATH`, so a file swapped after the check is not the one
/// used. The probe child gets the same descriptors (ProbeRunner). A missing or changed library
/// refuses the plugins that pin it, naming the file; a plugin that pins nothing is unaffected.
public enum PinnedLibraries {
    /// Opens and checks every library the plugin set pins for the record's plugin. On success
    /// the record's `pinnedLibraryDescriptors` hold one open descriptor per library (closed by
    /// `closeDescriptors`); on failure every descriptor opened here is closed again.
    public static func check(_ record: inout PluginRecord, catalog: PluginCatalog,
                             host: Preflight.HostIdentity = .current) -> LoadFailure? {
        guard let id = record.manifest?.id, let pin = catalog.pin(for: id) else { return nil }
        var opened: [Int32] = []
        for library in pin.entry.libraries {
            let path = location(of: library, setPath: pin.path)
            switch verify(path, sha256: library.sha256, pinnedBy: "plugin set \(pin.path)", host: host) {
            case .success(let fd):
                opened.append(fd)
            case .failure(let failure):
                opened.forEach { close($0) }
                return failure
            }
        }
        record.pinnedLibraryDescriptors = opened
        return nil
    }

    /// The library's path as it is opened and named in messages: a relative path starts at the
    /// set's directory, with its leading `..` applied to that directory's real path (exact, since
    /// a real path holds no symbolic link), so that messages say `lib/termhost/libssh2/...`
    /// rather than `lib/termhost/plugins/../libssh2/...`.
    static func location(of library: PluginSet.Library, setPath: String) -> String {
        guard !library.path.hasPrefix("/"), let real = realpath(PathText.parent(setPath), nil) else {
            return library.resolvedPath(setPath: setPath)
        }
        defer { free(real) }
        var directory = String(cString: real)
        var rest = Substring(library.path)
        while rest.hasPrefix("../") || rest.hasPrefix("./") {
            if rest.hasPrefix("../") { directory = PathText.parent(directory) }
            rest = rest.drop { $0 == "." }.dropFirst()
        }
        return (directory == "/" ? "" : directory) + "/" + rest
    }

    /// The open descriptor of the library at `path` when it is safe, loadable here and has the
    /// pinned sha256.
    static func verify(_ path: String, sha256 expected: String, pinnedBy: String,
                       host: Preflight.HostIdentity) -> Result<Int32, LoadFailure> {
        func unusable(_ reason: String) -> LoadFailure { .pinnedLibraryUnusable(library: path, reason: reason, pinnedBy: pinnedBy) }
        // O_NONBLOCK: a FIFO in its place must not block; fstat refuses it below.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .failure(unusable(String(cString: strerror(errno)))) }
        var st = stat()
        let problem: LoadFailure?
        if fstat(fd, &st) != 0 {
            problem = unusable(String(cString: strerror(errno)))
        } else if (st.st_mode & S_IFMT) != S_IFREG {
            problem = unusable("it is \(BoundedFile.kind(of: st.st_mode)), not a regular file")
        } else if let unsafe = SafePath.problem(fd: fd, path: path) {
            problem = unusable(unsafe)
        } else {
            problem = imageAndHashProblem(fd, path: path, expected: expected, pinnedBy: pinnedBy, host: host)
        }
        if let problem {
            close(fd)
            return .failure(problem)
        }
        return .success(fd)
    }

    private static func imageAndHashProblem(_ fd: Int32, path: String, expected: String, pinnedBy: String,
                                            host: Preflight.HostIdentity) -> LoadFailure? {
        let elf: ELFFile
        do { elf = try ELFFile(fd: fd) } catch {
            return .pinnedLibraryUnusable(library: path, reason: error.description, pinnedBy: pinnedBy)
        }
        guard elf.machine == host.machine else {
            return .pinnedLibraryUnusable(library: path, reason: "it is built for \(elf.architecture) but this host runs on \(ELFFile.architectureName(host.machine))",
                                          pinnedBy: pinnedBy)
        }
        let actual: String
        do { actual = try LibraryHash.hex(fd: fd) } catch {
            return .pinnedLibraryUnusable(library: path, reason: error.description, pinnedBy: pinnedBy)
        }
        guard actual == expected else {
            return .hashMismatch(library: path + " (a library it loads)", expected: expected, actual: actual, pinnedBy: pinnedBy)
        }
        return nil
    }

    /// Loads the verified libraries (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE, never closed, as
    /// plugins are) so that the plugin loaded next links to them. Called in the host and in the
    /// probe child right before the plugin's own dlopen.
    public static func preload(_ descriptors: [Int32]) throws(LoadFailure) {
        for fd in descriptors {
            _ = try DescriptorImage.open(fd, displayPath: pathOf(fd))
        }
    }

    /// The file open on `fd`, for messages (the probe child knows only the descriptor).
    static func pathOf(_ fd: Int32) -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/fd/\(fd)", &buf, buf.count - 1)
        return n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/proc/self/fd/\(fd)"
    }
}
