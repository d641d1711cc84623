// fuzz-sources: Plugins/Sync/Sources/SyncCore/FieldMerge.swift Plugins/Sync/Sources/SyncCore/FolderVaultLocation.swift
// What a vault's peer can put in a record of a collection with device-local fields (an
// identity naming secret IDs), and what can be typed as a vault folder. A record taken in
// never keeps a device-local field that did not come from this device's own copy, whatever
// the bytes; the fields a record carries are found exactly; a folder path normalised has no
// '.', '..' or empty component and stays absolute, and one in a system tree is refused;
// nothing traps.
import Foundation

let localFields = ["keySecret", "passwordSecret"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Half the input is the remote record, the rest this device's copy.
    let half = bytes.count / 2
    let remote = Array(bytes[..<half]), local = Array(bytes[half...])

    let taken = FieldMerge.keepLocal(remote, from: nil, localFields)
    precondition(FieldMerge.carriedLocalFields(taken, localFields).isEmpty, "a planted device-local field was taken in")
    let kept = FieldMerge.keepLocal(remote, from: local, localFields)
    if let object = FieldMerge.object(kept), FieldMerge.object(remote) != nil {
        let mine = FieldMerge.object(local) ?? [:]
        for field in localFields {
            precondition(FieldMerge.canonical(object[field]) == FieldMerge.canonical(mine[field]), "\(field) did not come from the local copy")
        }
    }
    if let object = FieldMerge.object(remote) {
        precondition(FieldMerge.carriedLocalFields(remote, localFields) == localFields.filter { object[$0] != nil }.sorted())
    }

    let text = String(decoding: bytes, as: UTF8.self)
    let normal = FolderVaultLocation.normalized(text)
    precondition(normal.utf8.first == UInt8(ascii: "/"))
    let parts = normal.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
    precondition(normal == "/" || !parts.contains { $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) }, "not normal: \(normal)")
    // A system tree stays refused however the name after it is spelled (a combining mark
    // after '/' once hid /etc from a comparison made on Characters).
    if ["/etc/", "/proc/", "/usr/"].contains(where: { normal.utf8.starts(with: $0.utf8) }) {
        precondition(FolderVaultLocation.refusal(normal) != nil, "a system directory was accepted: \(normal)")
    }
    return 0
}
