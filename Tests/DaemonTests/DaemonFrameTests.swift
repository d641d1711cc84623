import Testing
import TermhostDaemon

/// The frame decoder (Docs/Daemon.md, Frames): whole frames out of any split of the stream, the
/// limit checked before the payload is held, and malformed input answered, never thrown.
@Suite struct DaemonFrameTests {
    let frames = [DaemonFrame(type: 1, payload: Array(#"{"protocol":1,"client":"t"}"#.utf8)),
                  DaemonFrame(type: 16, payload: []),
                  DaemonFrame(type: 0xffff_ffff, payload: [UInt8](repeating: 7, count: 70_000))]

    func decodeAll(_ stream: [UInt8], pieces: Int) -> [DaemonFrame] {
        var decoder = DaemonFrameDecoder()
        var out: [DaemonFrame] = []
        var i = 0
        while i < stream.count {
            let end = min(stream.count, i + pieces)
            decoder.feed(stream[i..<end])
            i = end
            while case .frame(let f) = decoder.next() { out.append(f) }
        }
        #expect(decoder.pendingBytes == 0)
        return out
    }

    @Test(arguments: [1, 3, 8, 9, 4096, 1 << 20])
    func framesSurviveAnySplitOfTheStream(pieces: Int) {
        let stream = frames.flatMap { $0.encoded() }
        #expect(decodeAll(stream, pieces: pieces) == frames)
    }

    @Test func theHeaderIsLengthThenTypeBigEndian() {
        #expect(DaemonFrame(type: 0x0102_0304, payload: [0xaa, 0xbb]).encoded() == [0, 0, 0, 2, 1, 2, 3, 4, 0xaa, 0xbb])
    }

    @Test func aLengthOverTheLimitIsMalformedBeforeItsPayloadArrives() {
        var decoder = DaemonFrameDecoder()
        decoder.feed([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 16])
        #expect(decoder.next() == .malformed("a frame of 2147483647 bytes, over the limit of 1048576"))
        // Final: more bytes do not bring it back.
        decoder.feed(DaemonFrame(type: 16, payload: []).encoded())
        #expect(decoder.next() == .malformed("a frame of 2147483647 bytes, over the limit of 1048576"))
    }

    @Test func typeZeroIsMalformed() {
        var decoder = DaemonFrameDecoder()
        decoder.feed([0, 0, 0, 0, 0, 0, 0, 0])
        #expect(decoder.next() == .malformed("a frame of type 0, which no frame has"))
    }

    @Test func aTruncatedFrameWaitsAndIsSeenAsPending() {
        var decoder = DaemonFrameDecoder()
        decoder.feed(DaemonFrame(type: 16, payload: [1, 2, 3]).encoded().dropLast())
        #expect(decoder.next() == .needMore)
        #expect(decoder.pendingBytes == 10)
    }

    @Test func helloAndRequestFieldsAreCheckedWhereTheyEnter() {
        #expect(DaemonProtocol.hello(Array(#"{"protocol":1,"client":"termhost 1.0"}"#.utf8)) == .success(.init(version: 1, client: "termhost 1.0")))
        for bad in [#"{"protocol":true,"client":"x"}"#, #"{"protocol":1.5,"client":"x"}"#, #"{"protocol":0,"client":"x"}"#,
                    #"{"protocol":1}"#, #"{"protocol":1,"client":""}"#, "[1]", "not json",
                    #"{"protocol":1,"client":"\#(String(repeating: "x", count: 201))"}"#] {
            guard case .failure = DaemonProtocol.hello(Array(bad.utf8)) else { Issue.record("accepted: \(bad)"); continue }
        }
        #expect(DaemonProtocol.operation(Array(#"{"op":"status"}"#.utf8)) == .success("status"))
        guard case .failure(let e) = DaemonProtocol.operation([UInt8](repeating: 32, count: DaemonProtocol.maxRequest + 1)) else {
            Issue.record("an oversized request was read"); return
        }
        #expect(e.description.contains("over the limit"))
    }
}
