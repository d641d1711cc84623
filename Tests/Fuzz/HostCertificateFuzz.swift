// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/HostCertificate.swift
// A host key blob as a server sends it (seeds: ssh-keygen host certificates of each key type),
// read as a certificate and judged as ssh judges one, on any bytes: nothing traps or reads past
// the end; a certificate that is read gives back its parts exactly (the plain key is the type
// without its suffix followed by the key's own fields, the signed bytes and the signature make
// up the blob), and its judgement is one of OpenSSH's sentences.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let blob = Array(UnsafeBufferPointer(start: data, count: size))
    guard let cert = HostCertificate(blob) else { return 0 }
    precondition(HostCertificate.isCertificate(blob), "read as a certificate, not named one")
    let plainType = Array(cert.type.utf8.dropLast(HostCertificate.typeSuffix.utf8.count))
    var plain = HostCertificate.Reader(cert.plainKey)
    precondition(plain.string().map(Array.init) == plainType, "the plain key's type is not the certificate's")
    precondition(blob.starts(with: cert.signedBytes), "the signed bytes are not the blob's start")
    precondition(cert.signedBytes + HostCertificate.Reader.encoded(cert.signature) == blob, "the signature is not the rest")
    for host in ["127.0.0.1", "HOST.example", ""] {
        for now: UInt64 in [0, 1_800_000_000, .max] {
            if let problem = cert.problem(host: host, now: now) {
                precondition(problem.hasPrefix("Certificate "), "an unexpected judgement: \(problem)")
            }
        }
    }
    return 0
}
