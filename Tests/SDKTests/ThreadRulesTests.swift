import Testing
import TermhostSDK

/// The debug-build check of the [main] rule (entry.h): a [main] host service called from a
/// thread the host did not call into (a plugin's own thread, a [session] callback) traps,
/// naming the rule, instead of racing the host's lifecycle. Release builds compile it out.
struct ThreadRulesTests {
    #if DEBUG
    @Test func aMainServiceCalledOutsideAHostCallbackTraps() async {
        await #expect(processExitsWith: .failure) {
            ThreadRules.requireMain("commands.list")
        }
    }
    #endif
}
