// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/SyncedHostKeyRecord.swift Plugins/SSH/Sources/SSHPlugin/KnownHostsParser.swift Plugins/SSH/Sources/SSHPlugin/Base64.swift SDK/Swift/TermhostSDK/VisibleText.swift
// A synced known hosts record (from another device, through the vault) on any bytes: the input
// is the record key, a NUL byte, then the value. Nothing traps; a record that decodes is
// consistent (its key type is the one inside the key blob, its ID is hex) and encodes to a
// record key and value that decode to the same record; a refusal's reason is plain text.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let recordKey = String(decoding: bytes[..<split], as: UTF8.self)
    let value = Array(bytes[min(split + 1, bytes.count)...])
    switch SyncedHostKeyRecord.decode(recordKey: recordKey, value: value) {
    case .success(let r):
        precondition(SyncedHostKeyRecord.isHostID(r.hostID) && SyncedHostKeyRecord.isKeyTypeName(r.keyType))
        precondition(KnownHostsParser.keyTypeBytes(in: r.key).map { String(decoding: $0, as: UTF8.self) } == r.keyType)
        precondition(r.recordKey == recordKey, "the record key does not round-trip")
        guard case .success(let again) = SyncedHostKeyRecord.decode(recordKey: r.recordKey, value: r.value) else {
            preconditionFailure("an encoded record does not decode")
        }
        precondition(again == r && again.value == r.value, "the encoding is not canonical")
    case .failure(let refusal):
        precondition(VisibleText.isPlain(refusal.reason), "a control character in a refusal")
    }
    return 0
}
