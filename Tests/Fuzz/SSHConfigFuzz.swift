// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/SSHConfigParser.swift Plugins/SSH/Sources/SSHPlugin/SSHConfigLexing.swift Plugins/SSH/Sources/SSHPlugin/HostRules.swift SDK/Swift/TermhostSDK/EnvironmentName.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/BoundedNumber.swift
// The ssh_config parser of `termhost hosts import` on any bytes: nothing traps, and every host
// it accepts passes the rules `hosts add` applies (HostRules), with a port in range and a name
// that cannot read as an option or an ad-hoc destination. Include of a name starting with "a"
// reads the input again (a loop), "b" a file over the size limit, anything else a missing file.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let files = SSHConfigParser.Files(
        expand: { arg in arg.hasPrefix("a") ? ["/fuzz/config"] : arg.hasPrefix("b") ? ["/fuzz/big"] : ["/fuzz/missing"] },
        load: { path, limit in
            switch path {
            case "/fuzz/config": return input.count > limit ? .tooLarge(input.count) : .bytes(input)
            case "/fuzz/big": return .tooLarge(limit + 1)
            default: return .failed("cannot be read (No such file or directory)")
            }
        })
    let parsed = SSHConfigParser(file: "/fuzz/config", files: files)
    precondition(parsed.refused == nil, "the input is far below the size limit")
    var names = Set<String>()
    for h in parsed.hosts {
        precondition(HostRules.check(name: h.name, address: h.address, port: h.port, user: h.user,
                                     identityFile: h.identityFile, jump: h.jump, keepaliveInterval: h.keepaliveInterval,
                                     keepaliveCountMax: h.keepaliveCountMax, sendEnv: h.sendEnv, setEnv: h.setEnv,
                                     certificateFile: h.certificateFile, hostKeyAlias: h.hostKeyAlias,
                                     moreIdentityFiles: h.moreIdentityFiles) == nil,
                     "an accepted host breaks a rule: \(h)")
        precondition((1...65535).contains(h.port))
        precondition(!h.name.isEmpty && !h.name.hasPrefix("-") && !h.name.contains("@") && !h.name.contains(":"))
        precondition(!h.name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f || $0 == " " })
        precondition(!h.address.hasPrefix("-") && !(h.user?.hasPrefix("-") ?? false))
        precondition((h.jump?.count ?? 0) <= HostRules.maxJumpHops)
        precondition(names.insert(h.name).inserted, "a host imported twice: \(h.name)")
        precondition(h.at.hasPrefix("/fuzz/config:"))
        precondition(!h.sendEnv.contains { $0.hasPrefix("-") }, "a SendEnv removal kept as a pattern: \(h.sendEnv)")
        precondition(h.notCarried.allSatisfy(VisibleText.isPlain), "a control character in a keyword reaches the preview")
    }
    for message in parsed.warnings + parsed.skipped {
        precondition(VisibleText.isPlain(message), "a control character reaches the terminal: \(Array(message.utf8))")
        precondition(message.hasPrefix("/fuzz/"), "a message without its file:line: \(message)")
    }
    return 0
}
