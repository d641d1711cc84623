import AssistantCore
import Foundation
import Testing

/// `termhost mcp`'s framing and message parsing (JSONRPCLines, JSONRPCMessage), directly.
@Suite struct JSONRPCTests {
    @Test func linesAreBoundedAndTheirCutDoesNotMatter() {
        var lines = JSONRPCLines(maxLineBytes: 8)
        let input = Array("abc\r\n\n  \r\n12345678\r\n123456789\nxyz".utf8)
        var items: [JSONRPCLines.Item] = []
        for byte in input { items += lines.feed(CollectionOfOne(byte)) }
        if let last = lines.finish() { items.append(last) }
        #expect(items == [.line(Array("abc".utf8)), .line(Array("12345678".utf8)), .oversized(bytes: 9), .line(Array("xyz".utf8))])
        var whole = JSONRPCLines(maxLineBytes: 8)
        var once = whole.feed(input)
        if let last = whole.finish() { once.append(last) }
        #expect(once == items)
    }

    @Test func aLongLineIsCountedNotKept() {
        var lines = JSONRPCLines(maxLineBytes: 4)
        #expect(lines.feed(Array(repeating: UInt8(ascii: "a"), count: 1000)).isEmpty)
        #expect(lines.feed(Array("aa\nok\n".utf8)) == [.oversized(bytes: 1002), .line(Array("ok".utf8))])
    }

    @Test func idsAreStringsOrIntegersOnly() {
        func id(_ json: String) -> JSONRPCID? {
            guard case .success(.request(let id, _, _)) = JSONRPCMessage.parse(Array(#"{"jsonrpc":"2.0","method":"ping","id":\#(json)}"#.utf8)) else { return nil }
            return id
        }
        #expect(id("7") == .number(7))
        #expect(id(#""a""#) == .string("a"))
        #expect(id("-3") == .number(-3))
        #expect(id("true") == nil && id("2.5") == nil && id("1e30") == nil && id("null") == nil && id("{}") == nil)
    }

    @Test func responsesAndNotificationsAreTold() {
        guard case .success(.notification(let method, let params)) = JSONRPCMessage.parse(Array(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#.utf8)) else {
            Issue.record("not a notification")
            return
        }
        #expect(method == "notifications/cancelled" && JSONRPCID(jsonValue: params["requestId"]) == .number(4))
        guard case .success(.response(let id, _, let error)) = JSONRPCMessage.parse(Array(#"{"jsonrpc":"2.0","id":"termhost-1","error":{"code":-1,"message":"no"}}"#.utf8)) else {
            Issue.record("not a response")
            return
        }
        #expect(id == .string("termhost-1") && error?.code == -1 && error?.message == "no")
        guard case .failure(let e) = JSONRPCMessage.parse(Array(#"{"jsonrpc":"2.0","id":5}"#.utf8)) else {
            Issue.record("a response without result or error was accepted")
            return
        }
        #expect(e == JSONRPCError(.invalidRequest, #"a response needs a "result" or an "error""#, id: .number(5)))
    }

    @Test func anAnswerIsOneLineWhateverItCarries() {
        let line = JSONRPCMessage.result(.number(1), ["text": "a\nb\u{1b}[2J\"c"])
        #expect(!line.contains("\n") && !line.contains("\u{1b}"))
        #expect(line == #"{"id":1,"jsonrpc":"2.0","result":{"text":"a\nb\u001b[2J\"c"}}"#)
    }
}
