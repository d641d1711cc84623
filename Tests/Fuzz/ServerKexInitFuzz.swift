// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/ServerKexInit.swift
// The server's first bytes (identification line and KEXINIT) on any input: nothing traps, and
// every name returned is 1-64 printable ASCII characters without a comma.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let offer = ServerKexInit.parse(bytes) else { return 0 }
    precondition(ServerKexInit.afterIdentification(bytes) != nil, "an offer without an identification line")
    for list in [offer.keyExchange, offer.hostKey, offer.ciphersClientToServer, offer.ciphersServerToClient,
                 offer.macsClientToServer, offer.macsServerToClient] {
        for name in list {
            precondition((1...64).contains(name.utf8.count), "a name of \(name.utf8.count) bytes")
            precondition(name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ",") }, "a name with a byte that is not printable ASCII")
        }
    }
    // Bytes after the packet do not change what was read.
    precondition(ServerKexInit.parse(bytes + [0, 1, 2, 3]) == offer, "trailing bytes changed the offer")
    return 0
}
