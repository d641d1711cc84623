import Testing
@testable import TermhostDaemon

/// The environment a client sends with `run`: what it leaves out, and what the daemon refuses.
@Suite struct ClientEnvironmentTests {
    @Test func theClientSendsOnlyNamesAPluginCanAskForAndStaysInsideTheLimit() {
        let sent = ClientEnvironment.outgoing(["TERM": "xterm", "BASH_FUNC_f%%": "() { :; }", "1X": "a", "EMPTY": "",
                                               "NUL": "a\u{0}b", "_UNDER": "u"])
        #expect(sent.variables == ["TERM": "xterm", "EMPTY": "", "_UNDER": "u"])
        #expect(sent.left.isEmpty)
        let big = String(repeating: "v", count: 60 * 1024)
        let crowded = ClientEnvironment.outgoing(["A": big, "B": big, "C": big])
        #expect(crowded.variables.keys.sorted() == ["A", "B"] && crowded.left == ["C"], "two fit in 128 KiB, the third is named")
    }

    @Test func theDaemonRefusesAMalformedEnvironmentWholeAndAcceptsNone() throws {
        #expect(try ClientEnvironment.incoming([:]).get() == nil, "an older client sends none: the daemon's own then")
        #expect(try ClientEnvironment.incoming(["environment": ["LANG": "C.UTF-8"]]).get() == ["LANG": "C.UTF-8"])
        let refused: [(Any, String)] = [
            (["LANG", "C"], "\"environment\" must be an object of variable names to string values"),
            (["BAD-NAME": "x"], "\"environment\": 'BAD-NAME' is not a variable name"),
            (["ESC\u{1b}": "x"], #""environment": 'ESC\033' is not a variable name"#),
            (["N": 5], "\"environment\": N must be a string without NUL"),
            (["N": "a\u{0}"], "\"environment\": N must be a string without NUL"),
            (["A": String(repeating: "v", count: 128 * 1024)], "\"environment\" is over the limit of 131072 bytes"),
            (Dictionary(uniqueKeysWithValues: (0...4096).map { ("V\($0)", "") }), "\"environment\" has 4097 variables, over the limit of 4096"),
        ]
        for (value, message) in refused {
            guard case .failure(let problem) = ClientEnvironment.incoming(["environment": value]) else {
                Issue.record("accepted \(value)")
                continue
            }
            #expect(problem.description == message)
        }
    }
}
