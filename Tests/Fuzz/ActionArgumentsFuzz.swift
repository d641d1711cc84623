// fuzz-sources: Registry/Sources/ActionArguments.swift Registry/Sources/ActionJSON.swift Registry/Sources/ActionDescriptor.swift
// A typed action's arguments from any bytes, the way `termhost call` and the JSON form take
// them: the first byte picks a type, the rest is one word for it, and the whole input is also
// read as a JSON object for an action with one parameter of each type. Nothing traps; a value
// accepted has the declared type and, for integers, prints back as the word it came from
// (no leading zeros or "-0"); the JSON reader's text re-parses to the same value.
import Foundation

let types = ActionDescriptor.ValueType.allCases.filter { $0 != .void }
let everyType = ActionDescriptor(name: "fuzz", summary: "fuzz", symbol: "fuzz",
                                 params: types.map { .init(name: $0.rawValue, type: $0, description: "") },
                                 result: .void, readOnly: true, thread: .any, takesError: false)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let type = types[Int(first) % types.count]
    let word = Array(bytes.dropFirst())
    if let value = try? ActionArguments.word(word, as: type) {
        switch (type, value) {
        case (.bool, .bool), (.double, .double), (.string, .string), (.bytes, .bytes), (.json, .json): break
        case (.int32, .int32(let n)): precondition(Int64(String(decoding: word, as: UTF8.self)) == Int64(n))
        case (.int64, .int64(let n)): precondition(Int64(String(decoding: word, as: UTF8.self)) == n)
        case (.uint32, .uint32(let n)): precondition(UInt64(String(decoding: word.drop { $0 == UInt8(ascii: "-") }, as: UTF8.self)) == UInt64(n))
        case (.uint64, .uint64(let n)): precondition(UInt64(String(decoding: word.drop { $0 == UInt8(ascii: "-") }, as: UTF8.self)) == n)
        default: preconditionFailure("\(type) gave \(value)")
        }
        if case .string(let s) = value { precondition(!s.contains(0) && String(validating: s, as: UTF8.self) != nil) }
    }
    if let parsed = try? ActionJSON.parse(bytes) {
        precondition((try? ActionJSON.parse(Array(parsed.text.utf8))) == parsed, "text does not re-parse to the same value")
    }
    if let values = try? ActionArguments.fromJSON(bytes, for: everyType) { precondition(values.count == types.count) }
    return 0
}
