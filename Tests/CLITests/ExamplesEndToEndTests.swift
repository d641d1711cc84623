import Foundation
import Testing
import TestSupport

@Suite struct ExamplesEndToEndTests {
    @Test func cAndSwiftExamplesLoadSideBySideAndTheirCommandsRun() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        try Fixtures.helloSwift(in: cli.plugins)
        let first = try cli.run("hello")
        #expect(first.status == 0)
        #expect(first.stdout == "Hello, world! (greeting number 1, from C)\n")
        #expect(try cli.run("hello", "Ann").stdout == "Hello, Ann! (greeting number 2, from C)\n")
        let swift = try cli.run("--json", "hello-swift", "Bob")
        #expect(swift.stdout == "{\"greeting\":\"Hello, Bob!\",\"count\":1}\n")
        let usage = try cli.run("hello", "a", "b")
        #expect(usage.status == 2 && usage.stderr == "usage: termhost hello [NAME]\n")
        let help = try cli.run("help")
        #expect(help.stdout.contains("  hello        Greet someone and count the greetings [org.termhost.examples.hello-c]"))
        #expect(help.stdout.contains("  hello-swift  Greet someone from Swift and count the greetings [org.termhost.examples.hello-swift]"))
        #expect(try cli.run("--help", "hello").stdout.hasPrefix("usage: termhost hello [NAME]\n"))
    }

    @Test func listingsOfferJSON() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let features = try JSONSerialization.jsonObject(with: Data(try cli.run("features", "--json").stdout.utf8)) as! [[String: Any]]
        #expect(features.count == 1)
        #expect(features[0]["id"] as? String == "org.termhost.examples.hello-c")
        #expect(features[0]["state"] as? String == "enabled")
        #expect(features[0]["commands"] as? [String] == ["hello"])
        let plugins = try JSONSerialization.jsonObject(with: Data(try cli.run("--json", "plugins", "list").stdout.utf8)) as! [[String: Any]]
        #expect(plugins.first?["status"] as? String == "ok")
        let doctor = try cli.run("doctor", "--json")
        #expect(doctor.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as! [String: Any]
        #expect((report["problems"] as? [String])?.isEmpty == true)
        let info = try cli.run("plugins", "info", "org.termhost.examples.hello-c")
        #expect(info.status == 0 && info.stdout.contains("sha256"))
    }

    @Test func pluginCommandExitStatusBecomesTermhostsAndUnknownCommandsSuggest() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "f", id: "org.test.f")
        let ok = try cli.run("fixture", "x", "y z")
        #expect(ok.status == 0 && ok.stdout == "fixture ran with 2 argument(s) [x] [y z]\n")
        #expect(try cli.run("fixture", "fail").status == 1)
        // A plugin writing to a pipe whose reader is gone hears EPIPE; SIGPIPE never ends the host.
        let broken = try cli.run("fixture", "broken-pipe")
        #expect(broken.status == 0, "\(broken.output)")
        #expect(broken.stdout.contains("write to a closed pipe: EPIPE\n"), "\(broken.stdout)")
        // ...and a program it starts has SIGPIPE's default (bit 12 of the ignored mask clear).
        let ignored = broken.stdout.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
        let mask = ignored.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(mask.map { $0 & (1 << 12) == 0 } == true, "\(broken.stdout)")
        let unknown = try cli.run("fixtur")
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "termhost: unknown command 'fixtur'. Did you mean 'fixture'?\nRun 'termhost help' for the list of commands.\n")
        let badOption = try cli.run("--jsn", "features")
        #expect(badOption.status == 2 && badOption.stderr.hasPrefix("termhost: unknown option '--jsn'. Did you mean '--json'?"))
    }
}
