// fuzz-sources: SDK/Swift/TermhostSDK/CommandArguments.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/BoundedNumber.swift
// The plugin commands' parser on any command line (the input split at NUL bytes into arguments):
// nothing traps, every argument is accounted for exactly once, and a refusal is one line
// (`command: problem`, then the usage) with no control character of the input in it.

let spec = CommandArguments("termhost fuzz", usage: "usage: termhost fuzz [--json] [--port N] [-L SPEC]... ARG",
                            options: [.flag("--json"), .flag("-r", "--recursive"), .value("--port", "-p"), .value("-L")],
                            maxArguments: 3)
let leading = CommandArguments("termhost", options: [.flag("--json"), .value("--log-level")], optionsEndAtFirstArgument: true)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let args = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    for parser in [spec, leading] {
        do {
            let p = try parser.parse(args)
            let values = p.occurrences.filter { $0.value != nil }.count
            precondition(p.arguments.count + p.occurrences.count <= args.count)
            precondition(p.arguments.count + values <= args.count)
            for given in p.occurrences {
                precondition(parser.option(given.option)?.name == given.option, "an undeclared option was recorded")
                precondition((given.value != nil) == parser.option(given.option)!.takesValue)
            }
            if let max = parser.maxArguments { precondition(p.arguments.count <= max) }
            _ = try? p.integer("--port", in: 1...65535)
        } catch {
            let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
            precondition(lines[0].utf8.starts(with: "\(parser.command): ".utf8))   // bytes: a mark may follow ": "
            precondition(VisibleText.isPlain(String(lines[0])), "a control character reached the message: \(Array(lines[0].utf8))")
            precondition(lines.count == 1 || error.usage != nil)
        }
    }
    return 0
}
