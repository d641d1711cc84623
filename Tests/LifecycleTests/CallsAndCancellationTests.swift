import Foundation
import Testing
import TermhostLifecycle
import TermhostRegistry
import TestSupport

/// The lifecycle side of Ctrl-C: an instance a command is still inside is shut down but never
/// destroyed; cancellation flags and handlers behave as termhost.cancel/1 documents.
@Suite struct CallsAndCancellationTests {
    @Test func shutdownNeverDestroysAnInstanceACallIsStillInside() throws {
        let rec = Recorder()
        let m = try manager([("a", .process, 1), ("busy", .process, 2)], recorder: rec)
        m.start()
        let busy = try #require(m.instance(FeatureID(checked: "org.t.busy")))
        let token = m.calls.enter(busy, feature: FeatureID(checked: "org.t.busy"), source: "test", command: "run")
        let start = Date()
        let outcome = m.shutdown()
        #expect(Date().timeIntervalSince(start) >= 1, "it waits for the command, until the bound")
        #expect(!outcome.boundExpired && outcome.abandoned.isEmpty && outcome.stillInCall.map(\.command) == ["run"])
        #expect(rec.events == ["activate a", "activate busy", "shutdown busy", "shutdown a", "destroy a"])
        m.calls.leave(token)
        #expect(m.calls.waitUntilNone(before: Date()).isEmpty)
    }

    @Test func shutdownWaitsForACommandToReturnBeforeDestroyingItsInstance() throws {
        let rec = Recorder()
        let m = try manager([("busy", .process, 1)], recorder: rec, options: .init(shutdownBound: 10, backgroundGrace: nil))
        m.start()
        let busy = try #require(m.instance(FeatureID(checked: "org.t.busy")))
        let token = m.calls.enter(busy, feature: FeatureID(checked: "org.t.busy"), source: "test", command: "run")
        // The command returns once it has heard shutdown(), as a command stopped by a signal does.
        Thread {
            Wait.until(poll: 0.001) { rec.count("shutdown busy") > 0 }
            rec.add("command returns")
            m.calls.leave(token)
        }.start()
        let outcome = m.shutdown()
        #expect(outcome.stillInCall.isEmpty && !outcome.boundExpired)
        #expect(rec.events == ["activate busy", "shutdown busy", "command returns", "destroy busy"])
    }

    @Test func retiringAWorkspaceSkipsTheDestroyOfABusyInstance() throws {
        let rec = Recorder()
        let m = try manager([("session", .workspace, 1)], recorder: rec)
        m.start()
        let scene = m.attachScene(hasTerminal: false)
        let w = try #require(m.openWorkspace(in: scene))
        let session = try #require(m.instance(FeatureID(checked: "org.t.session"), scene: scene, workspace: w))
        let token = m.calls.enter(session, feature: FeatureID(checked: "org.t.session"), source: "test", command: "run")
        m.closeWorkspace(w)
        #expect(rec.count("shutdown session") == 1 && rec.count("destroy") == 0, "\(rec.events)")
        m.calls.leave(token)
    }

    @Test func retiringWaitsForTheCommandInsideBeforeDestroying() throws {
        let rec = Recorder()
        let m = try manager([("session", .workspace, 1)], recorder: rec, options: .init(shutdownBound: 10, backgroundGrace: nil))
        m.start()
        let scene = m.attachScene(hasTerminal: false)
        let w = try #require(m.openWorkspace(in: scene))
        let session = try #require(m.instance(FeatureID(checked: "org.t.session"), scene: scene, workspace: w))
        let token = m.calls.enter(session, feature: FeatureID(checked: "org.t.session"), source: "test", command: "shell")
        Thread {
            Wait.until(poll: 0.001) { rec.count("shutdown session") > 0 }
            rec.add("command returns")
            m.calls.leave(token)
        }.start()
        m.detachScene(scene)   // SIGHUP while the session's command runs
        #expect(rec.events.suffix(3) == ["shutdown session@w\(w)", "command returns", "destroy session@w\(w)"], "\(rec.events)")
    }

    @Test func waitingForCallsReturnsWhatIsStillRunningAtTheDeadline() throws {
        let calls = CallsInProgress()
        final class Instance {}
        let i = Instance()
        let t = calls.enter(i, feature: FeatureID(checked: "org.t.x"), source: "test", command: "x")
        #expect(calls.waitUntilNone(before: Date().addingTimeInterval(0.05)).map(\.command) == ["x"])
        Thread { calls.leave(t) }.start()
        #expect(calls.waitUntilNone(before: Date().addingTimeInterval(10)).isEmpty)
    }

    @Test func cancellationSetsFlagsAndRunsEachHandlerOnce() {
        let c = CommandCancellation()
        let rec = Recorder()
        let one = c.onCancel(scene: 1) { rec.add("one \($0)") }
        _ = c.onCancel(scene: 2) { rec.add("two \($0)") }
        _ = c.onCancel(scene: 0) { rec.add("any \($0)") }
        let removed = c.onCancel(scene: 1) { rec.add("removed \($0)") }
        c.remove(removed)
        #expect(!c.isCancelled(1) && !c.isCancelled(0))
        c.cancel(scene: 1)
        #expect(c.isCancelled(1) && !c.isCancelled(2) && !c.isCancelled(0))
        #expect(rec.events == ["one 1", "any 1"])
        c.remove(one)
        c.cancelAll()
        #expect(c.isCancelled(2) && c.isCancelled(0))
        #expect(rec.events == ["one 1", "any 1", "two 2"])
        _ = c.onCancel(scene: 3) { rec.add("late \($0)") }
        #expect(rec.events.last == "late 3", "registered after the cancellation: runs at once")
    }
}
