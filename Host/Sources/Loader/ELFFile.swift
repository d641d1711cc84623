import Glibc

/// Reads what the loader must know about a shared library before any of its code runs:
/// class and machine (architecture), the DT_NEEDED and DT_RUNPATH entries, and the `.comment`
/// section (which names the compiler that built it). Reads through an already-open descriptor
/// with pread(2), so the bytes examined are the bytes later loaded. 64-bit little-endian only,
/// which covers every architecture Termhost is built for (x86_64, aarch64).
public struct ELFFile: Sendable {
    public let machine: UInt16
    public let needed: [String]
    public let runpath: String?
    public let comment: [String]
    /// Defined global or weak symbols in .dynsym: what the library exports.
    public let exportedSymbols: [String]

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notELF
        case unsupportedClass(String)
        case notSharedObject
        case truncated(String)

        public var description: String {
            switch self {
            case .notELF: "not an ELF file"
            case .unsupportedClass(let what): "unsupported ELF file: \(what)"
            case .notSharedObject: "ELF file is not a shared library (ET_DYN)"
            case .truncated(let what): "ELF file is truncated or corrupt (\(what))"
            }
        }
    }

    /// ELF e_machine values for the architectures Termhost supports.
    public static func architectureName(_ machine: UInt16) -> String {
        switch machine {
        case 62: "x86_64"
        case 183: "aarch64"
        case 3: "i386"
        case 40: "arm"
        case 243: "riscv64"
        default: "machine \(machine)"
        }
    }

    public var architecture: String { ELFFile.architectureName(machine) }

    /// True when the library links the Swift runtime, i.e. it was written (at least partly) in Swift.
    public var usesSwiftRuntime: Bool { needed.contains("libswiftCore.so") }

    /// The `clang version ... (https://github.com/swiftlang/llvm-project.git <commit>)` line that
    /// swiftc writes; each Swift toolchain release has its own LLVM commit.
    public var swiftToolchainFingerprint: String? {
        comment.first { $0.contains("swiftlang/llvm-project") || $0.contains("apple/llvm-project") }
    }

    public init(fd: Int32) throws(Failure) {
        // Offsets and sizes come from the file: a 64-bit field read into Int can be negative,
        // and a negative count or index would trap, so each is checked before use.
        func read(_ offset: Int, _ count: Int) throws(Failure) -> [UInt8] {
            guard offset >= 0, count >= 0 else { throw .truncated("offset \(offset), size \(count)") }
            var buf = [UInt8](repeating: 0, count: count)
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            guard n == count else { throw .truncated("short read at offset \(offset)") }
            return buf
        }
        let header = try read(0, 64)
        guard header[0] == 0x7F, header[1] == 0x45, header[2] == 0x4C, header[3] == 0x46 else { throw .notELF }
        guard header[4] == 2 else { throw .unsupportedClass("32-bit") }
        guard header[5] == 1 else { throw .unsupportedClass("big-endian") }
        func u16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        func u32(_ b: [UInt8], _ at: Int) -> Int { u16(b, at) | u16(b, at + 2) << 16 }
        func u64(_ b: [UInt8], _ at: Int) -> Int { u32(b, at) | u32(b, at + 4) << 32 }
        guard u16(header, 16) == 3 else { throw .notSharedObject }
        machine = UInt16(u16(header, 18))

        let shoff = u64(header, 0x28), shentsize = u16(header, 0x3A), shnum = u16(header, 0x3C)
        let shstrndx = u16(header, 0x3E)
        guard shoff > 0, shentsize >= 64, shnum > 0, shnum < 10_000, shstrndx < shnum else {
            throw .truncated("section header table")
        }
        let table = try read(shoff, shentsize * shnum)
        struct Section { let name: Int, type: Int, offset: Int, size: Int, link: Int }
        let sections = (0..<shnum).map { i in
            let at = i * shentsize
            return Section(name: u32(table, at), type: u32(table, at + 4), offset: u64(table, at + 0x18),
                           size: u64(table, at + 0x20), link: u32(table, at + 0x28))
        }
        func contents(_ s: Section) throws(Failure) -> [UInt8] {
            guard s.size >= 0, s.size < 64 << 20 else { throw .truncated("section of \(s.size) bytes") }
            return s.type == 8 /* SHT_NOBITS */ ? [] : try read(s.offset, s.size)
        }
        func string(_ table: [UInt8], _ at: Int) -> String {
            guard at >= 0, at < table.count else { return "" }
            return String(decoding: table[at...].prefix { $0 != 0 }, as: UTF8.self)
        }
        let names = try contents(sections[shstrndx])

        var comment: [String] = []
        if let s = sections.first(where: { string(names, $0.name) == ".comment" }) {
            comment = try contents(s).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }
        var needed: [String] = []
        var runpath: String? = nil
        if let dyn = sections.first(where: { $0.type == 6 /* SHT_DYNAMIC */ }), dyn.link < shnum {
            let strtab = try contents(sections[dyn.link])
            let entries = try contents(dyn)
            for at in stride(from: 0, to: entries.count - 15, by: 16) {
                let tag = u64(entries, at), value = u64(entries, at + 8)
                if tag == 0 { break }
                if tag == 1 { needed.append(string(strtab, value)) }           // DT_NEEDED
                if tag == 29 || tag == 15 { runpath = string(strtab, value) }  // DT_RUNPATH, DT_RPATH
            }
        }
        var exported: [String] = []
        if let dynsym = sections.first(where: { $0.type == 11 /* SHT_DYNSYM */ }), dynsym.link < shnum {
            let strtab = try contents(sections[dynsym.link])
            let table = try contents(dynsym)
            for at in stride(from: 24, to: table.count - 23, by: 24) {
                let bind = table[at + 4] >> 4, visibility = table[at + 5] & 3, shndx = u16(table, at + 6)
                if shndx != 0 && (bind == 1 || bind == 2) && (visibility == 0 || visibility == 3) {
                    exported.append(string(strtab, u32(table, at)))
                }
            }
        }
        self.exportedSymbols = exported
        self.comment = comment
        self.needed = needed
        self.runpath = runpath
    }

    /// The ELF description of the running executable (the host itself).
    public static func ofCurrentExecutable() -> ELFFile? {
        let fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return try? ELFFile(fd: fd)
    }
}
