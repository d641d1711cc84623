// fuzz-sources: Plugins/Assistant/Sources/AssistantCore/ShellWords.swift Plugins/Assistant/Sources/AssistantCore/ProgramRule.swift Plugins/Assistant/Sources/AssistantCore/ReadOnlyPrograms.swift Plugins/Assistant/Sources/AssistantCore/CommandWrappers.swift Plugins/Assistant/Sources/AssistantCore/CommandClassifier.swift Plugins/Assistant/Sources/AssistantCore/SedScreen.swift Plugins/Assistant/Sources/AssistantCore/CommandFamily.swift
// The ssh_exec command classifier on any text: it never traps or hangs, and whatever it calls
// read-only passes checks made here without its parser: no expansion, substitution, subshell,
// brace, input redirection or background '&' outside quotes, and every '>' outside quotes goes
// to /dev/null or a descriptor number. A read-only command stays read-only nowhere else: chained
// with a state-changing command, or run by `sudo -n`, it is not read-only.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let command = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let verdict = CommandClassifier.classify(command)
    precondition(verdict == CommandClassifier.classify(command), "the verdict is not deterministic")
    let family = CommandFamily.of(command)
    guard verdict == .readOnly else { return 0 }
    precondition(command.utf8.count <= ShellWords.maxBytes, "an over-long command was read-only")
    precondition(!command.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" || $0.value == 0x1B }, "a control character was read-only")
    if let problem = unquotedProblem(Array(command.utf8)) { preconditionFailure("read-only despite \(problem): \(Array(command.utf8))") }
    precondition(family != nil, "a read-only command has no family")
    for suffix in [" && rm -rf /", "; reboot", " | sh", " > /etc/passwd"] {
        precondition(CommandClassifier.classify(command + suffix) != .readOnly, "'\(suffix)' appended stayed read-only")
    }
    precondition(CommandClassifier.classify("sudo -n " + command) != .readOnly, "sudo -n was read-only")
    return 0
}

/// An independent scan of what lies outside quotes in a command that was called read-only.
func unquotedProblem(_ bytes: [UInt8]) -> String? {
    var i = 0
    var single = false, double = false
    func at(_ j: Int) -> UInt8? { j < bytes.count ? bytes[j] : nil }
    while i < bytes.count {
        let b = bytes[i]
        if single { if b == UInt8(ascii: "'") { single = false }; i += 1; continue }
        if double {
            if b == UInt8(ascii: "\\") { i += 2; continue }
            if b == UInt8(ascii: "\"") { double = false }
            if b == UInt8(ascii: "$") || b == UInt8(ascii: "`") { return "an expansion inside double quotes" }
            i += 1; continue
        }
        switch b {
        case UInt8(ascii: "\\"): i += 2; continue
        case UInt8(ascii: "'"): single = true
        case UInt8(ascii: "\""): double = true
        case UInt8(ascii: "$"), UInt8(ascii: "`"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "<"):
            return "'\(Character(Unicode.Scalar(b)))' outside quotes"
        case UInt8(ascii: "&"):
            if at(i + 1) == UInt8(ascii: "&") { i += 2; continue }
            if i > 0, bytes[i - 1] == UInt8(ascii: ">") { break }
            return "a single '&'"
        case UInt8(ascii: ">"):
            var j = i + 1
            if at(j) == UInt8(ascii: "&") {
                guard let d = at(j + 1), d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return "'>&' without a descriptor" }
                i = j + 1; continue
            }
            if at(j) == UInt8(ascii: ">") { j += 1 }
            while at(j) == UInt8(ascii: " ") || at(j) == UInt8(ascii: "\t") { j += 1 }
            let null = Array("/dev/null".utf8)
            guard j + null.count <= bytes.count, Array(bytes[j..<j + null.count]) == null else { return "'>' to a file" }
            i = j + null.count; continue
        default: break
        }
        i += 1
    }
    return single || double ? "an unterminated quote" : nil
}
