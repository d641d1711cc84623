import Glibc
import TermhostRegistry
import CTermhost

/// Checks that run before any plugin code: the library is opened once, and every check reads
/// that descriptor. The same descriptor is later handed to the probe and to dlopen
/// (`/proc/self/fd/N`), so what was checked is what runs (no time-of-check/time-of-use gap).
public enum Preflight {
    /// What the host itself is: its ABI, architecture and Swift toolchain fingerprint.
    public struct HostIdentity: Sendable {
        public var abiMajor: UInt32 = UInt32(TERMHOST_ABI_MAJOR)
        public var abiMinor: UInt32 = UInt32(TERMHOST_ABI_MINOR)
        public var machine: UInt16
        public var swiftFingerprint: String?

        public init(abiMajor: UInt32 = UInt32(TERMHOST_ABI_MAJOR), abiMinor: UInt32 = UInt32(TERMHOST_ABI_MINOR),
                    machine: UInt16, swiftFingerprint: String?) {
            self.abiMajor = abiMajor
            self.abiMinor = abiMinor
            self.machine = machine
            self.swiftFingerprint = swiftFingerprint
        }

        public static let current: HostIdentity = {
            let me = ELFFile.ofCurrentExecutable()
            return HostIdentity(machine: me?.machine ?? 62, swiftFingerprint: me?.swiftToolchainFingerprint)
        }()
    }

    /// Opens and checks the record's library, and the libraries its plugin set pins for it. On
    /// success the record gains path, size, mtime, hash and `pinnedLibraryDescriptors`, and the
    /// open descriptor is returned (the caller closes it, and the record's). On failure the
    /// record's `failure` is set and nil is returned.
    public static func check(_ record: inout PluginRecord, catalog: PluginCatalog,
                             host: HostIdentity = .current) -> Int32? {
        guard record.failure == nil, let manifest = record.manifest else { return nil }
        let path = record.directory + "/" + manifest.library
        record.libraryPath = path
        if let failure = abiFailure(manifest, host) {
            record.failure = failure
            return nil
        }
        // O_NONBLOCK: opening a FIFO for reading waits for a writer, which would block every
        // command; with it the open returns and the fstat below refuses what is not a file.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            record.failure = .libraryMissing(path: path, reason: String(cString: strerror(errno)))
            return nil
        }
        if let failure = checkOpened(fd, path: path, manifest: manifest, record: &record, catalog: catalog, host: host)
            ?? PinnedLibraries.check(&record, catalog: catalog, host: host) {
            record.failure = failure
            close(fd)
            return nil
        }
        return fd
    }

    static func abiFailure(_ manifest: PluginManifest, _ host: HostIdentity) -> LoadFailure? {
        guard let abi = manifest.abiVersion else { return .badManifest("abi '\(manifest.abi)' is malformed") }
        if abi.major != host.abiMajor || abi.minor > host.abiMinor {
            return .abiMismatch(plugin: "\(abi.major).\(abi.minor)", host: "\(host.abiMajor).\(host.abiMinor)")
        }
        return nil
    }

    /// The checks that need no manifest, on an opened library: a regular file nobody else may
    /// write, an ELF image for the host's architecture, built with the host's Swift toolchain.
    /// `termhost plugins manifest` runs them before it probes a library to derive its manifest.
    public static func libraryProblem(fd: Int32, path: String, host: HostIdentity = .current) -> LoadFailure? {
        var st = stat()
        return fileProblem(fd, path: path, &st) ?? imageProblem(fd, path: path, manifest: nil, host: host)
    }

    static func checkOpened(_ fd: Int32, path: String, manifest: PluginManifest, record: inout PluginRecord,
                            catalog: PluginCatalog, host: HostIdentity) -> LoadFailure? {
        var st = stat()
        if let failure = fileProblem(fd, path: path, &st) { return failure }
        record.size = Int64(st.st_size)
        record.mtimeNanoseconds = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        if let failure = imageProblem(fd, path: path, manifest: manifest, host: host) { return failure }

        do { record.sha256 = try LibraryHash.hex(fd: fd) } catch {
            return .libraryMissing(path: path, reason: error.description)
        }
        if let expected = manifest.sha256?.lowercased(), expected != record.sha256 {
            return .hashMismatch(library: path, expected: expected, actual: record.sha256!,
                                 pinnedBy: "its manifest \(record.directory)/manifest.json")
        }
        if let pin = catalog.pin(for: manifest.id) {
            if pin.entry.version != manifest.version {
                return .versionMismatch(expected: pin.entry.version, actual: manifest.version, pinnedBy: "plugin set \(pin.path)")
            }
            if pin.entry.sha256 != record.sha256 {
                return .hashMismatch(library: path, expected: pin.entry.sha256, actual: record.sha256!,
                                     pinnedBy: "plugin set \(pin.path)")
            }
        }
        return nil
    }

    /// Regular file (fstat into `st`), with permissions nobody else can change.
    static func fileProblem(_ fd: Int32, path: String, _ st: inout stat) -> LoadFailure? {
        guard fstat(fd, &st) == 0 else { return .libraryMissing(path: path, reason: String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            return .notLoadable(path: path, reason: "it is \(BoundedFile.kind(of: st.st_mode)), not a regular file")
        }
        if let unsafe = SafePath.problem(fd: fd, path: path) { return .unsafePermissions(unsafe) }
        return nil
    }

    /// ELF image of the host's architecture (and of the manifest's, when it declares one), and
    /// the host's Swift toolchain when the image uses the Swift runtime.
    static func imageProblem(_ fd: Int32, path: String, manifest: PluginManifest?, host: HostIdentity) -> LoadFailure? {
        let elf: ELFFile
        do { elf = try ELFFile(fd: fd) } catch { return .notLoadable(path: path, reason: error.description) }
        let hostArch = ELFFile.architectureName(host.machine)
        if elf.machine != host.machine {
            return .architectureMismatch(library: path, plugin: elf.architecture, host: hostArch)
        }
        if let manifest, let declared = manifest.architecture, declared != hostArch {
            return .architectureMismatch(library: "manifest of \(manifest.id)", plugin: declared, host: hostArch)
        }
        if elf.usesSwiftRuntime, let mine = host.swiftFingerprint {
            let theirs = elf.swiftToolchainFingerprint
            if theirs != mine {
                return .toolchainMismatch(plugin: theirs.map(shortFingerprint) ?? "no toolchain record in .comment",
                                          host: shortFingerprint(mine))
            }
        }
        return nil
    }

    /// "clang version 21.0.0 (https://github.com/swiftlang/llvm-project.git 11673e6660b2...)"
    /// -> "Swift toolchain with LLVM 21.0.0 (11673e6660b2)".
    static func shortFingerprint(_ line: String) -> String {
        let words = line.split(separator: " ")
        let version = words.count > 2 ? String(words[2]) : "?"
        let commit = words.last.map { String($0.trimmingCharacters(")")).prefix(12) } ?? "?"
        return "Swift toolchain with LLVM \(version) (\(commit))"
    }
}

extension Substring {
    func trimmingCharacters(_ c: Character) -> Substring {
        var s = self
        while s.last == c { s = s.dropLast() }
        return s
    }
}
