// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/PathTokens.swift Plugins/SSH/Sources/SSHPlugin/Destination.swift SDK/Swift/TermhostSDK/VisibleText.swift
// An IdentityFile or CertificateFile path as an imported config or another device's record
// gives it, expanded as when connecting (% tokens, ${VARIABLE}, ~ and ~NAME/), on any bytes:
// nothing traps, a refusal is one line of plain text (it is printed on stderr), and a path
// with nothing to expand comes back as it was.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let path = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let destination = Destination(name: "lab", address: "192.0.2.7", port: 2222, user: "ann", identityFile: nil)
    let result = PathTokens.expand(path, destination: destination, remoteUser: "ann", localUser: "me", home: "/home/me",
                                   variable: { $0 == "KEYS" ? "/keys" : nil })
    switch result {
    case .success(let expanded):
        if !path.contains("%") && !path.contains("$") && !path.hasPrefix("~") {
            precondition(expanded == path, "a plain path changed: \(path) -> \(expanded)")
        }
    case .failure(let why):
        precondition(VisibleText.isPlain(why.message), "a control character reaches stderr: \(Array(why.message.utf8))")
    }
    return 0
}
