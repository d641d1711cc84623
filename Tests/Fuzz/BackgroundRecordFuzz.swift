// fuzz-sources: Plugins/SFTP/Sources/SFTPPlugin/BackgroundRecord.swift Plugins/SFTP/Sources/SFTPPlugin/TransferDirection.swift Plugins/SFTP/Sources/SFTPPlugin/ConflictPolicy.swift Plugins/SFTP/Sources/SFTPPlugin/Pacing.swift SDK/Swift/TermhostSDK/VisibleText.swift
// A background transfer's record as the daemon reads it back from the store (a file anyone
// with the user's rights may edit), on any bytes: it decodes or is refused, never traps; one
// that passes its checks names an ID in range, a host that cannot be read as an option, an
// absolute local path (and target), a limit -l could give; and it encodes back to itself.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let record = BackgroundRecord.decoded(bytes) else { return 0 }
    _ = (record.from, record.to)
    if let problem = record.problem {
        precondition(VisibleText.isPlain(problem), "a refusal shows what it quotes: \(Array(problem.utf8))")
        return 0
    }
    precondition(BackgroundRecord.ids.contains(record.id))
    precondition(!record.host.isEmpty && record.host.utf8.first != UInt8(ascii: "-"), "host \(Array(record.host.utf8))")
    precondition(record.local.utf8.first == UInt8(ascii: "/"), "local \(Array(record.local.utf8))")
    if let root = record.root { precondition(root.utf8.first == UInt8(ascii: "/"), "root \(Array(root.utf8))") }
    precondition(record.limit <= Pacing.maxBytesPerSecond)
    let again = try? JSONEncoder().encode(record)
    precondition(again.flatMap { BackgroundRecord.decoded(Array($0)) } == record, "does not survive a round trip")
    return 0
}
