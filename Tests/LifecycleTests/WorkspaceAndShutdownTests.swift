import Foundation
import Synchronization
import Testing
import TermhostLifecycle
import TermhostRegistry
import TestSupport

@Suite struct WorkspaceAndShutdownTests {
    @Test func aWorkspaceIsPublishedBeforeItConnects() throws {
        let rec = Recorder()
        let m = try manager([("session", .workspace, 1)], recorder: rec, onEvent: { event in
            if case .workspacePublished(_, let w, let index) = event { rec.add("published w\(w) #\(index)") }
        })
        m.start()
        let s = m.attachScene(hasTerminal: true)
        let w = try #require(m.openWorkspace(in: s))
        #expect(rec.events == ["published w\(w) #1", "activate session@w\(w)"])
    }

    @Test func aFailedFeatureIsRecordedAndItsDependentsAreSkippedWithAReason() throws {
        let rec = Recorder()
        let m = try manager([("broken", .process, 1), ("user", .process, 2), ("other", .process, 3)],
                            requires: ["user": "broken"], recorder: rec)
        m.start()
        #expect(m.failures[FeatureID(checked: "org.t.broken")] == "cannot reach the agent")
        #expect(m.failures[FeatureID(checked: "org.t.user")] == "requires feature 'org.t.broken', which failed to start")
        // The instance whose activate failed is destroyed at once; the dependent is never created.
        #expect(rec.events == ["destroy broken", "activate other"])
    }

    @Test func shutdownRunsInReverseOrderOnceAndIsIdempotent() throws {
        let rec = Recorder()
        let m = try manager([("a", .process, 1), ("b", .process, 2), ("nav", .scene, 3), ("session", .workspace, 4)], recorder: rec)
        m.start()
        let s = m.attachScene(hasTerminal: false)
        let w = try #require(m.openWorkspace(in: s))
        let first = m.shutdown()
        #expect(!first.boundExpired && first.abandoned.isEmpty)
        let shutdowns = rec.events.filter { $0.hasPrefix("shutdown") }
        #expect(shutdowns == ["shutdown session@w\(w)", "shutdown nav@s\(s)", "shutdown b", "shutdown a"])
        #expect(rec.count("destroy") == 4)
        #expect(m.shutdown() == first)
        #expect(rec.count("shutdown") == 4, "a second shutdown must not run callbacks again")
        #expect(m.phase == .terminating)
    }

    /// The CLI's command can return while a signal's shutdown is still running: detaching its
    /// scene then must not call features the shutdown thread is shutting down and destroying.
    @Test func aSceneDetachedDuringShutdownCallsNoFeature() throws {
        let rec = Recorder()
        let m = try manager([("a", .process, 1), ("hung", .process, 2), ("nav", .scene, 3)], recorder: rec, hangs: ["hung"],
                            options: .init(shutdownBound: 0.5, backgroundGrace: nil))
        m.start()
        let s = m.attachScene(hasTerminal: true)
        let done = DispatchSemaphore(value: 0)
        Thread { _ = m.shutdown(); done.signal() }.start()
        #expect(Wait.until(poll: 0.001) { rec.count("shutdown hung") > 0 })
        m.detachScene(s)
        m.closeWorkspace(1)
        done.wait()
        #expect(rec.count("detached") == 0, "\(rec.events)")
        #expect(rec.events.last == "shutdown hung")
    }

    @Test func aFeatureHangingInShutdownDoesNotHoldTheProcessPastTheBound() throws {
        let rec = Recorder()
        let m = try manager([("a", .process, 1), ("hung", .process, 2), ("c", .process, 3)], recorder: rec, hangs: ["hung"],
                            options: .init(shutdownBound: 0.5, backgroundGrace: nil))
        m.start()
        let start = Date()
        let outcome = m.shutdown()
        let elapsed = Date().timeIntervalSince(start)
        #expect(outcome.boundExpired)
        // Only the culprit is blamed; "a" was never asked to shut down (and is not destroyed).
        #expect(outcome.abandoned == ["org.t.hung"])
        #expect(outcome.notShutDown == ["org.t.a"])
        #expect(elapsed >= 0.5 && elapsed < 3, "bounded at 0.5 s (plus scheduling slack on a loaded machine)")
        #expect(rec.events == ["activate a", "activate hung", "activate c", "shutdown c", "shutdown hung"])
        #expect(m.shutdown() == outcome, "the bound's outcome is the one every caller sees")
    }

    @Test func concurrentShutdownCallsCompleteOnceWithTheSameOutcome() throws {
        let rec = Recorder()
        let m = try manager([("a", .process, 1), ("b", .process, 2)], recorder: rec)
        m.start()
        let outcomes = Mutex<[ShutdownOutcome]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let o = m.shutdown()
            outcomes.withLock { $0.append(o) }
        }
        let all = outcomes.withLock { $0 }
        #expect(all.count == 8 && Set(all.map(\.seconds)).count == 1)
        #expect(rec.count("shutdown") == 2 && rec.count("destroy") == 2)
    }
}
