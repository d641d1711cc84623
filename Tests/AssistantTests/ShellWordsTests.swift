import AssistantCore
import Testing

/// The tokenizer's argv after quote removal: the classifier proves things about these words, so
/// they must be exactly what the remote program receives.
@Suite struct ShellWordsTests {
    static let argvs: [(String, [String])] = [
        ("echo \"a\\\"b\" 'c d' e\\ f", ["echo", "a\"b", "c d", "e f"]),
        ("'r''m' -rf x", ["rm", "-rf", "x"]),
        ("\"ls\"", ["ls"]),
        ("echo \"a\\b\" \"\\$\" \"\\\\\"", ["echo", "a\\b", "$", "\\"]),
        ("echo '' \"\"", ["echo", "", ""]),
        ("grep -E 'a|b;c&&d' f", ["grep", "-E", "a|b;c&&d", "f"]),
        ("ls\t-la   /", ["ls", "-la", "/"]),
        ("ls 2>/dev/null -l", ["ls", "-l"]),
        ("ls >/dev/null 2>&1", ["ls"]),
        ("echo a#b x!y", ["echo", "a#b", "x!y"]),
        ("echo ünïcødé", ["echo", "ünïcødé"]),
    ]

    @Test(arguments: argvs)
    func argvAfterQuoteRemoval(_ command: String, _ argv: [String]) throws {
        let script = try ShellWords.parse(command)
        #expect(script.commands.map { $0.map(\.text) } == [argv])
    }

    @Test func operatorsSplitTheCommandsInOrder() throws {
        let script = try ShellWords.parse("a && b || c; d | e;")
        #expect(script.commands.map { $0.map(\.text) } == [["a"], ["b"], ["c"], ["d"], ["e"]])
        #expect(script.operators == [.and, .or, .sequence, .pipe])
    }

    @Test func unquotedGlobCharactersAreMarkedAndQuotedOnesAreNot() throws {
        let words = try ShellWords.parse("ls *.log '*.txt' a?b \"[x]\" x\\*").commands[0]
        #expect(words.map(\.hasGlob) == [false, true, false, true, false, false])
    }

    static let rejections: [(String, String)] = [
        ("echo `id`", "the command uses a command substitution '`', which is not proven read-only"),
        ("ls \u{1B}[31m", "the command contains the character U+001B (a newline, control, format or unusual space character)"),
        ("ls > f", "the command uses an output redirection '>' to a file, which is not proven read-only"),
    ]

    @Test(arguments: rejections)
    func theRejectionNamesTheConstruct(_ command: String, _ reason: String) {
        do {
            _ = try ShellWords.parse(command)
            Issue.record("parsed: \(command)")
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func theGateSeesTheSameReasonAsTheVerdict() {
        #expect(CommandClassifier.unprovenPart(of: "uptime") == nil)
        #expect(CommandClassifier.classify("rm x") == .mayChangeState(reason: CommandClassifier.unprovenPart(of: "rm x")!))
    }
}
