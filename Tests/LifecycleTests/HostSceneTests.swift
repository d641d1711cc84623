import Foundation
import Testing
import TermhostLoader
import TermhostRuntime
import TermhostServices
import TestSupport

/// The scene handle a front end holds: attaching gives its terminal to the prompt service,
/// detaching takes it back.
@Suite struct HostSceneTests {
    @Test func aDetachedScenesPromptFailsClosedInsteadOfReadingItsOldTerminal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var o = RuntimeOptions()
        o.searchPath = PluginSearchPath(entries: [.init(directory: dir.sub("plugins"), origin: .environment)])
        o.paths = .under(dir.path)
        o.logLevel = .error
        let runtime = try HostRuntime.start(o)
        defer { runtime.shutdown() }
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        #expect(pipe(&input) == 0 && pipe(&output) == 0)
        defer { (input + output).forEach { close($0) } }
        // Two answers waiting: without the detach, the second prompt would read "stale".
        let answers = Array("alice\nstale\n".utf8)
        #expect(answers.withUnsafeBytes { write(input[1], $0.baseAddress, $0.count) } == answers.count)

        let scene = runtime.attachScene(terminal: .init(input: input[0], output: output[1]))
        #expect(runtime.lifecycle.sceneIDs == [scene.id])
        #expect(try runtime.services.interaction.promptText(scene: scene.id, prompt: "User: ", echo: true) == "alice")

        scene.detach()
        #expect(runtime.lifecycle.sceneIDs.isEmpty)
        #expect(!runtime.services.interaction.hasTerminal(scene.id))
        #expect(throws: Interaction.Failure.nonInteractive("cannot ask 'User: ': scene \(scene.id) has no terminal")) {
            try runtime.services.interaction.promptText(scene: scene.id, prompt: "User: ", echo: true)
        }
        scene.detach()   // a second detach (the signal path racing the command's end) does nothing
        #expect(runtime.lifecycle.sceneIDs.isEmpty)
    }
}
