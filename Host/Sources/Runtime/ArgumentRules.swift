import Foundation

/// The rules BoundaryArguments applies to values a plugin passes, on plain bytes and strings
/// with no dependency on the C types, so that Tests/Fuzz/ArgumentRulesFuzz.swift can compile
/// this file alone and check them on any input.
enum ArgumentRules {
    /// Longest topic in bytes, like a feature ID (topics are reverse DNS too).
    static let maxTopicBytes = 200

    enum TopicProblem: Equatable {
        case empty
        case tooLong(bytes: Int)
        case character(Unicode.Scalar)
    }

    /// Why `topic` is not a topic, or nil when it is: 1 to 200 bytes of [a-z0-9._-].
    static func topicProblem(_ topic: String) -> TopicProblem? {
        if topic.isEmpty { return .empty }
        if topic.utf8.count > maxTopicBytes { return .tooLong(bytes: topic.utf8.count) }
        if let bad = topic.unicodeScalars.first(where: { !isTopicCharacter($0) }) { return .character(bad) }
        return nil
    }

    static func isTopicCharacter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("0"..."9").contains(c) || c == "." || c == "_" || c == "-"
    }

    /// The offset of the first byte that does not belong to valid UTF-8, or nil when all of
    /// `bytes` is valid UTF-8.
    static func firstInvalidUTF8<C: Collection<UInt8>>(_ bytes: C) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let c): offset += Unicode.UTF8.width(c)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// Whether `text` is one JSON value (an object, array, string, number, true, false or null).
    static func isJSON(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }
}
