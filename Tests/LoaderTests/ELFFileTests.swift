import Foundation
import Testing
import TermhostLoader
import TestSupport

/// The ELF reader takes offsets and sizes from the file; a hostile library must be refused,
/// never trap the host (its 64-bit fields read into Int can be negative).
@Suite struct ELFFileTests {
    @Test func aSectionWithANegativeSizeIsRefusedAsCorrupt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var bytes = [UInt8](repeating: 0, count: 128)
        bytes[0...5] = [0x7F, 0x45, 0x4C, 0x46, 2, 1]        // ELF, 64-bit, little-endian
        bytes[16] = 3                                        // ET_DYN
        bytes[18] = 62                                       // x86_64
        bytes[0x28] = 64                                     // e_shoff: the table follows the header
        bytes[0x3A] = 64                                     // e_shentsize
        bytes[0x3C] = 1                                      // e_shnum; e_shstrndx 0
        bytes[64 + 4] = 3                                    // SHT_STRTAB
        for i in 0..<8 { bytes[64 + 0x20 + i] = 0xFF }       // sh_size: 2^64 - 1, -1 as Int
        let path = dir.path + "/libhostile.so"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(throws: ELFFile.Failure.truncated("section of -1 bytes")) { try ELFFile(fd: fd) }
    }
}
