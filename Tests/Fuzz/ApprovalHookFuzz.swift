// fuzz-sources: Plugins/Assistant/Sources/AssistantPlugin/Approvals/ApprovalHook.swift Plugins/Assistant/Sources/AssistantProviders/LoopbackHost.swift SDK/Swift/TermhostSDK/VisibleText.swift
// The approval notification hook's setting (a config file's JSON), on any bytes: it is taken
// or refused with a message that shows what it quotes, never traps; a hook taken posts only to
// an http(s) URL of printable ASCII, plain http only to loopback, and runs only an absolute
// path without control characters.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let hook: ApprovalHook?
    do throws(ApprovalHook.Invalid) { hook = try ApprovalHook.parse(text) } catch {
        precondition(VisibleText.isPlain(error.message), "a refusal shows what it quotes: \(Array(error.message.utf8))")
        return 0
    }
    guard let hook else { return 0 }
    for url in [hook.url, hook.click].compactMap({ $0 }) {
        precondition(url.utf8.count <= 2048 && url.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }, "url \(Array(url.utf8))")
        let scheme = url.prefix { $0 != ":" }.lowercased()
        precondition(scheme == "http" || scheme == "https", "scheme of \(url)")
    }
    if let url = hook.url, url.lowercased().hasPrefix("http:") {
        let host = URLComponents(string: url)?.percentEncodedHost ?? ""
        precondition(LoopbackHost.contains(host), "plain http to \(host)")
    }
    if let command = hook.command {
        precondition(command.utf8.first == UInt8(ascii: "/") && VisibleText.isPlain(command), "command \(Array(command.utf8))")
    }
    return 0
}
