import Foundation
import Synchronization
import Testing
import TermhostServices
import TestSupport

@Suite struct EventBusAndLogTests {
    @Test func eventsReachTopicAndWildcardSubscribersUntilUnsubscribed() {
        let bus = EventBus()
        let seen = Mutex<[String]>([])
        let t1 = bus.subscribe(owner: "a", topic: "org.x.connected") { topic, payload in seen.withLock { $0.append("a:\(topic):\(payload)") } }
        bus.subscribe(owner: "b", topic: "*") { topic, _ in seen.withLock { $0.append("b:\(topic)") } }
        bus.publish("org.x.connected", "{\"host\":\"prod\"}")
        bus.publish("org.x.other")
        bus.unsubscribe(t1)
        bus.publish("org.x.connected")
        bus.unsubscribeAll(owner: "b")
        bus.publish("org.x.connected")
        #expect(seen.withLock { $0 } == ["a:org.x.connected:{\"host\":\"prod\"}", "b:org.x.connected", "b:org.x.other", "b:org.x.connected"])
    }

    @Test func logLinesGoToTheFileWithSourceAndLevelAndRespectTheThreshold() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/state/termhost.log"
        let log = LogSink(filePath: path, stderrLevel: .error, fileLevel: .info)
        log.log(.debug, "org.a", "too quiet")
        log.log(.info, "org.a", "two\nlines")
        log.log(.warning, "host", "careful")
        log.log(.error, "org.a", "name \u{1b}]0;PWNED\u{07}\r\u{1b}[2J")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasSuffix("info [org.a] two lines"))
        #expect(lines[1].hasSuffix("warning [host] careful"))
        #expect(lines[2].hasSuffix(#"error [org.a] name \033]0;PWNED\007\015\033[2J"#))
    }
}
