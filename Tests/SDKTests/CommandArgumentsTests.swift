import Testing
import TermhostSDK

/// The SDK's command-line parser, word for word: what plugin commands accept and the one
/// wording of their usage errors.
@Suite struct CommandArgumentsTests {
    static let usage = "usage: termhost demo add HOST [--port N] [--tag TAG]... [--json]"
    static let demo = CommandArguments("termhost demo add", usage: usage, options: [
        .flag("--json"), .value("--port", "-p"), .value("--tag"), .flag("-r", "--recursive"),
    ])

    func problem(_ args: [String], _ spec: CommandArguments = demo) -> String? {
        do {
            _ = try spec.parse(args)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aFlagIsSeenWhereverItStands() throws {
        let p = try Self.demo.parse(["web", "--json"])
        #expect(p.has("--json") && !p.has("-r"))
        #expect(p.arguments == ["web"])
        #expect(try Self.demo.parse(["--recursive", "web"]).has("-r"), "an alias is recorded under the option's name")
    }

    @Test func aValueOptionTakesBothSpellingsAndTheShortOne() throws {
        #expect(try Self.demo.parse(["--port", "22", "web"]).value("--port") == "22")
        #expect(try Self.demo.parse(["--port=2222", "web"]).value("--port") == "2222")
        #expect(try Self.demo.parse(["-p", "23"]).value("--port") == "23")
        #expect(try Self.demo.parse(["-p24"]).value("--port") == "24")
        #expect(try Self.demo.parse(["--port=", "x"]).value("--port") == "", "an empty value is a value")
        #expect(try Self.demo.parse(["--port", "-5"]).value("--port") == "-5", "the next argument, whatever it looks like")
    }

    @Test func repeatedOptionsKeepEveryValueInOrder() throws {
        let p = try Self.demo.parse(["--tag", "a", "web", "--tag=b", "--port", "1", "--port", "2"])
        #expect(p.values("--tag") == ["a", "b"])
        #expect(p.value("--port") == "2", "the last value wins")
        #expect(p.occurrences.map(\.option) == ["--tag", "--tag", "--port", "--port"])
    }

    @Test func aMissingValueNamesTheOption() {
        #expect(problem(["web", "--port"]) == "termhost demo add: option '--port' needs a value")
        #expect(problem(["-p"]) == "termhost demo add: option '-p' needs a value")
        #expect(problem(["--json=yes"]) == "termhost demo add: option '--json' takes no value")
    }

    @Test func anUnknownOptionIsRefusedWithTheNearestSuggestionAndTheUsage() {
        #expect(problem(["--jsn"]) == "termhost demo add: unknown option '--jsn'. Did you mean '--json'?\n\(Self.usage)")
        #expect(problem(["--prot=22"]) == "termhost demo add: unknown option '--prot'. Did you mean '--port'?\n\(Self.usage)")
        #expect(problem(["--colour"]) == "termhost demo add: unknown option '--colour'\n\(Self.usage)")
        #expect(problem(["-x"]) == "termhost demo add: unknown option '-x'\n\(Self.usage)", "no guess among short options")
        let bare = CommandArguments("termhost demo", options: [.flag("--json")])
        #expect(problem(["--bogus"], bare) == "termhost demo: unknown option '--bogus'", "no usage, no line after it")
    }

    @Test func controlCharactersInAnUnknownOptionAreShownNotObeyed() {
        #expect(problem(["--a\u{1b}[2Jb"]) == "termhost demo add: unknown option '--a\\033[2Jb'\n\(Self.usage)")
        #expect(problem(["--x\nfake line"]) == "termhost demo add: unknown option '--x\\012fake line'\n\(Self.usage)")
    }

    @Test func doubleDashEndsTheOptions() throws {
        let p = try Self.demo.parse(["web", "--", "--json", "-p", "-"])
        #expect(!p.has("--json"))
        #expect(p.arguments == ["web", "--json", "-p", "-"])
        #expect(try Self.demo.parse(["-"]).arguments == ["-"], "a lone dash is an argument")
    }

    @Test func optionsCanEndAtTheFirstArgument() throws {
        let exec = CommandArguments("termhost exec", options: [.value("-J")], optionsEndAtFirstArgument: true)
        let p = try exec.parse(["-J", "a,b", "host", "ls", "-l", "--json", "--"])
        #expect(p.value("-J") == "a,b")
        #expect(p.arguments == ["host", "ls", "-l", "--json", "--"])
    }

    @Test func tooManyArgumentsAreUnexpected() {
        let one = CommandArguments("termhost sftp", usage: "usage: termhost sftp HOST", maxArguments: 1)
        #expect(problem(["h", "x\ty"], one) == "termhost sftp: unexpected argument 'x\\011y'\nusage: termhost sftp HOST")
        #expect(problem(["h"], one) == nil)
    }

    @Test func helpIsEveryCommandsUnlessItDeclaresItself() throws {
        #expect(try Self.demo.parse(["web", "--help"]).help)
        #expect(try Self.demo.parse(["-h"]).help)
        let own = CommandArguments("termhost ls", options: [.flag("-h")])
        let p = try own.parse(["-h"])
        #expect(!p.help && p.has("-h"))
    }

    @Test func aBoundedNumberNamesTheOptionAsSpelledAndItsRange() throws {
        #expect(try Self.demo.parse(["--port", "22"]).integer("--port", in: 1...65535) == 22)
        #expect(try Self.demo.parse([]).integer("--port", in: 1...65535) == nil)
        #expect(throws: CommandUsageError.self) { try Self.demo.parse(["--port=0"]).integer("--port", in: 1...65535) }
        do {
            _ = try Self.demo.parse(["--port", "99999999999999999999"]).integer("--port", in: 1...65535, unit: "ports")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "termhost demo add: --port must be a whole number of ports from 1 to 65535, not '99999999999999999999'")
        }
        do {
            _ = try Self.demo.parse(["-p", "0", "--port", "22"]).integer("--port", in: 1...65535)
            Issue.record("an earlier value out of range was accepted")
        } catch {
            #expect(error.description == "termhost demo add: -p must be a whole number from 1 to 65535, not '0'")
        }
    }

    @Test func nearestSuggestsOnlyWithinTwoEdits() {
        #expect(CommandArguments.nearest(to: "fixtur", among: ["fixture", "hosts"]) == "fixture")
        #expect(CommandArguments.nearest(to: "xyz", among: ["fixture"]) == nil)
        #expect(CommandArguments.editDistance("", "abc") == 3 && CommandArguments.editDistance("abc", "") == 3)
        #expect(CommandArguments.editDistance("kitten", "sitting") == 3)
    }
}
