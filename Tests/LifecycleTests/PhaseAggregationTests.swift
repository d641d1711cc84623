import Foundation
import Testing
import TermhostLifecycle
import TermhostRegistry
import TestSupport

@Suite struct PhaseAggregationTests {
    @Test func processIsInBackgroundOnlyWhenEverySceneIs() throws {
        let rec = Recorder()
        let m = try manager([("store", .process, 1)], recorder: rec)
        m.start()
        let a = m.attachScene(hasTerminal: true), b = m.attachScene(hasTerminal: false)
        m.setScenePhase(a, .background)
        #expect(m.phase == .active)
        #expect(rec.count("background") == 0)
        m.setScenePhase(b, .background)
        #expect(m.phase == .background)
        #expect(rec.count("background store") == 1)
        m.setScenePhase(a, .active)
        #expect(m.phase == .active)
        #expect(rec.count("foreground store") == 1)
    }

    @Test func theDaemonsProcessStaysActiveWhileEverySceneIsInBackground() throws {
        let rec = Recorder()
        let m = try manager([("store", .process, 1)], recorder: rec, options: .init(shutdownBound: 1, backgroundGrace: 0.01, phaseFollowsScenes: false))
        m.start()
        let a = m.attachScene(hasTerminal: false)
        m.setScenePhase(a, .background)
        #expect(m.phase == .active && m.backgroundSceneCount == 1)
        m.expire()   // as the grace timer would: nothing is in background to expire
        #expect(m.phase == .active)
        #expect(rec.count("background") == 0 && rec.count("expire") == 0, "\(rec.events)")
    }

    @Test func anEmptySetOfScenesIsNotBackground() throws {
        let rec = Recorder()
        let m = try manager([("store", .process, 1)], recorder: rec)
        m.start()
        #expect(m.phase == .active)
        let a = m.attachScene(hasTerminal: false)
        m.setScenePhase(a, .background)
        #expect(m.phase == .background)
        m.detachScene(a)
        #expect(m.sceneIDs.isEmpty)
        #expect(m.phase == .active)
    }

    @Test func removingTheLastActiveSceneWhileOthersAreInBackgroundEntersBackground() throws {
        let rec = Recorder()
        let m = try manager([("store", .process, 1)], recorder: rec)
        m.start()
        let a = m.attachScene(hasTerminal: false), b = m.attachScene(hasTerminal: false)
        m.setScenePhase(b, .background)
        #expect(m.phase == .active)
        m.detachScene(a)
        #expect(m.phase == .background)
        #expect(rec.events.contains("detached store \(a)"))
    }

    @Test func expiryRetiresLiveWorkButKeepsTheIntentAndForegroundResumes() throws {
        let rec = Recorder()
        let m = try manager([("store", .process, 1), ("session", .workspace, 2)], recorder: rec)
        m.start()
        let s = m.attachScene(hasTerminal: true)
        let w = try #require(m.openWorkspace(in: s))
        m.setScenePhase(s, .background)
        m.expire()
        #expect(m.phase == .expired)
        #expect(rec.events.contains("expire store") && rec.events.contains("expire session@w\(w)"))
        #expect(m.wantsResume(w))
        #expect(m.workspaceIDs(in: s) == [w], "expiry keeps the workspace (the intent), it only retires live work")
        #expect(rec.count("shutdown") == 0 && rec.count("destroy") == 0)
        m.setScenePhase(s, .active)
        #expect(m.phase == .active)
        #expect(rec.events.contains("foreground session@w\(w)"))
        #expect(!m.wantsResume(w))
    }

    @Test func aQuickReturnToForegroundKeepsHealthySessions() throws {
        let rec = Recorder()
        let m = try manager([("session", .workspace, 1)], recorder: rec, options: .init(shutdownBound: 1, backgroundGrace: 0.3))
        m.start()
        let s = m.attachScene(hasTerminal: true)
        let w = try #require(m.openWorkspace(in: s))
        m.setScenePhase(s, .background)
        m.setScenePhase(s, .active)
        // Past the grace (0.3 s) of the first background period, twice over: its timer would
        // have fired by then.
        Wait.observe(for: 0.6)
        #expect(rec.count("expire") == 0, "a timer from an earlier background period must not expire the session")
        #expect(!m.wantsResume(w))
        // Staying in background past the grace does expire it (polled: a loaded machine may
        // run the timer late, never early).
        m.setScenePhase(s, .background)
        Wait.until(poll: 0.05) { m.phase == .expired }
        #expect(m.phase == .expired)
        #expect(rec.count("expire session@w\(w)") == 1)
    }

    @Test func severalScenesEachGetTheirOwnInstancesAndWorkspaceIndicesReuseTheLowestFree() throws {
        let rec = Recorder()
        let m = try manager([("nav", .scene, 1), ("session", .workspace, 2)], recorder: rec)
        m.start()
        let a = m.attachScene(hasTerminal: true), b = m.attachScene(hasTerminal: true)
        #expect(rec.events.contains("activate nav@s\(a)") && rec.events.contains("activate nav@s\(b)"))
        let w1 = try #require(m.openWorkspace(in: a)), w2 = try #require(m.openWorkspace(in: a))
        let w3 = try #require(m.openWorkspace(in: a))
        let other = try #require(m.openWorkspace(in: b))
        #expect([w1, w2, w3].map { m.workspaceIndex($0) } == [1, 2, 3])
        #expect(m.workspaceIndex(other) == 1)
        m.closeWorkspace(w2)
        let again = try #require(m.openWorkspace(in: a))
        #expect(m.workspaceIndex(again) == 2)
        m.detachScene(a)
        #expect(rec.events.contains("shutdown nav@s\(a)") && !rec.events.contains("shutdown nav@s\(b)"))
        #expect(m.workspaceIDs(in: b) == [other])
    }
}
