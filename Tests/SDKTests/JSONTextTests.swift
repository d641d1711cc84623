import Foundation
import Testing
import TermhostSDK

/// JSONText.quoted, the one JSON string escaper of plugins, host, registry and metrics.
@Suite struct JSONTextTests {
    @Test func quoteAndBackslashAreEscaped() {
        #expect(JSONText.quoted("") == #""""#)
        #expect(JSONText.quoted(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(JSONText.quoted("C:\\dir/file") == #""C:\\dir/file""#, "a slash is left as it is")
    }

    @Test func everyControlCharacterIsEscaped() {
        for v in UInt32(0)..<0x20 {
            let quoted = JSONText.quoted(String(Unicode.Scalar(v)!))
            let expected = switch v {
            case 0x0a: #""\n""#
            case 0x0d: #""\r""#
            case 0x09: #""\t""#
            default: "\"\\u" + String(repeating: "0", count: 4 - String(v, radix: 16).count) + String(v, radix: 16) + "\""
            }
            #expect(quoted == expected, "U+\(String(v, radix: 16))")
        }
    }

    @Test func delC1AndBidiOverridesAreEscapedToo() {
        #expect(JSONText.quoted("\u{7f}") == #""\u007f""#)
        #expect(JSONText.quoted("\u{9b}") == #""\u009b""#)
        #expect(JSONText.quoted("a\u{202e}b") == #""a\u202eb""#)
        #expect(JSONText.quoted("\u{2066}") == #""\u2066""#)
    }

    @Test func nonASCIIIsWrittenAsItIs() {
        #expect(JSONText.quoted("héllo €😀 日本") == "\"héllo €😀 日本\"")
    }

    @Test func appendsToWhatIsThere() {
        var out = "{\"k\":"
        JSONText.quote("v\n", into: &out)
        #expect(out == #"{"k":"v\n""#)
    }

    /// What it writes decodes back to the same text, for every scalar class it treats apart.
    @Test func roundTripsThroughJSONSerialization() throws {
        var all = (0..<0x80).map { String(Unicode.Scalar(UInt8($0))) }.joined()
        all += "\u{80}\u{9f}\u{a0}é\u{202a}\u{202e}\u{2066}\u{2069}€😀"
        let data = Data(("[" + JSONText.quoted(all) + "]").utf8)
        let decoded = try JSONSerialization.jsonObject(with: data) as? [String]
        #expect(decoded == [all])
    }
}
