@testable import AssistantProviders
import Testing

@Suite struct SSEParserTests {
    func events(_ text: String, maxEventBytes: Int = 1 << 20) throws -> [SSEEvent] {
        var parser = SSEParser(maxEventBytes: maxEventBytes)
        return try parser.feed(Array(text.utf8))
    }

    @Test func fieldsCommentsAndMultiLineData() throws {
        #expect(try events("\u{FEFF}: comment\nevent: ping\ndata: {}\n\ndata:a\ndata:  b\ndata\n\n") == [
            SSEEvent(type: "ping", data: "{}"),
            SSEEvent(type: "message", data: "a\n b\n"),
        ])
    }

    @Test func lineEndingsMayBeCRLFOrCROrLFMixed() throws {
        #expect(try events("data: 1\r\n\r\ndata: 2\r\rdata: 3\n\r\n") == [
            SSEEvent(type: "message", data: "1"), SSEEvent(type: "message", data: "2"), SSEEvent(type: "message", data: "3"),
        ])
    }

    @Test func aCRAtAChunkEndAndAnLFAtTheNextStartAreOneLineEnding() throws {
        var parser = SSEParser()
        #expect(try parser.feed(Array("data: 1\r".utf8)) == [])
        #expect(try parser.feed(Array("\n\r".utf8)) == [SSEEvent(type: "message", data: "1")])
        #expect(try parser.feed(Array("\ndata: 2\n\n".utf8)) == [SSEEvent(type: "message", data: "2")])
    }

    @Test func anEventWithoutDataAndAPartialEventAtTheEndAreDropped() throws {
        #expect(try events("event: ping\n\nid: 4\nretry: 10\n\ndata: cut") == [])
    }

    @Test func aLineOrEventLongerThanTheLimitIsRefused() throws {
        #expect(throws: SSEParserError.eventTooLarge(limit: 16)) { try events("data: " + String(repeating: "x", count: 20), maxEventBytes: 16) }
        #expect(throws: SSEParserError.eventTooLarge(limit: 16)) { try events("data: 12345678\ndata: 12345678\n", maxEventBytes: 16) }
        #expect(try events("data: 1234567890\n\n", maxEventBytes: 16) == [SSEEvent(type: "message", data: "1234567890")])
    }
}
