import Foundation
import Testing
import TestSupport

/// `termhost hosts import` of hostile or broken configs, and `hosts add|edit` of values that
/// break the rules: each refusal names file:line (or the option) and the rule, and the rest goes on.
@Suite struct ConfigImportRobustnessEndToEndTests {
    /// The path as the import reports it (canonical, so that Include loops are recognised).
    static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    static func harness(_ dir: TemporaryDirectory) throws -> SSHHarness { try SSHHarness(dir: dir) }

    @Test func malformedLinesAreWarnedWithFileAndLineAndTheOtherHostsImport() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        // A line '=' alone ended the process with SIGILL (an index out of range).
        let equals = Self.canonical(dir.write("home/.ssh/equals", "Host a\n=\n"))
        let e = try h.termhost(["hosts", "import", equals, "--yes"])
        #expect(!e.signaled && e.status == 0, "\(e.output)")
        #expect(e.stderr == "warning: \(equals):2: no keyword before '=' ('='); skipped\n")
        #expect(e.stdout.hasSuffix("Imported 1 host(s).\n"))

        let long = "HostName " + String(repeating: "x", count: 20_000)
        let text = "=\nKey=\n=value\nPort\nHost good\n  HostName 127.0.0.1\n  User \"unterminated\n\(long)\n"
        var bytes = Data(text.utf8)
        bytes.append(contentsOf: [0xff, 0xfe, 0x0a])                          // line 9: not UTF-8
        bytes.append(Data("Include config\nHost ok2\n  Port 2200\n".utf8))  // 10: includes itself
        let path = dir.sub("home/.ssh") + "/config"
        try bytes.write(to: URL(fileURLWithPath: path))
        let config = Self.canonical(path)

        let r = try h.termhost(["hosts", "import", path, "--yes"])
        #expect(!r.signaled && r.status == 0, "\(r.output)")
        // `Key=` before the first Host applies to every host: each lists it as not carried.
        #expect(r.stdout.contains("  good: 127.0.0.1:22; not carried: Key\n  ok2: ok2:2200; not carried: Key\n"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("Imported 2 host(s).\n"))
        for expected in [
            "warning: \(config):1: no keyword before '=' ('='); skipped",
            "warning: \(config):2: Key is not supported; not imported",
            "warning: \(config):3: no keyword before '=' ('=value'); skipped",
            "warning: \(config):4: Port needs a value; skipped",
            "warning: \(config):7: User: an unterminated quote (\"); skipped",
            "warning: \(config):8: the line is 20009 bytes long, more than the 16384 read; skipped",
            "warning: \(config):9: not UTF-8 text ('\\377\\376'); skipped",
            "warning: \(config):10: Include of \(config) makes a loop (it is being read); skipped",
        ] {
            #expect(r.stderr.contains(expected + "\n"), "missing: \(expected)\n\(r.stderr)")
        }
    }

    @Test func crlfFilesAndValuesThatBreakTheRulesAreRefusedWithFileLineAndRule() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let lines = [
            "Host lab", "  HostName 127.0.0.1", "  Port 2222",          // 1-3
            "Host badport", "  Port 99999",                             // 4-5
            "Host negport", "  Port -5",                                // 6-7
            "Host a@b c:d -oProxyCommand=x \"tab\there\" \"\"",          // 8
            "Host ctl", "  HostName \"evil\u{1b}[2J\"",                  // 9-10
            "Host dash", "  HostName -oProxyCommand=x",                 // 11-12
            "Host optuser", "  User -l",                                // 13-14
            "Host mark", "  HostName -\u{0301}oProxyCommand=x",        // 15-16: '-' and a combining mark, one Character
        ]
        let config = Self.canonical(dir.write("home/.ssh/config", lines.joined(separator: "\r\n") + "\r\n"))
        let r = try h.termhost(["hosts", "import", config, "--yes"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == "From \(config):\n  lab: 127.0.0.1:2222\nImported 1 host(s); 11 refused (see the warnings).\n")
        for expected in [
            "\(config):5: host 'badport' not imported: Port must be a whole number from 1 to 65535, not '99999'",
            "\(config):7: host 'negport' not imported: Port must be a whole number from 1 to 65535, not '-5'",
            "\(config):8: host 'a@b' not imported: a name may not contain '@' or ':' (those mean an ad-hoc destination user@host:port)",
            "\(config):8: host 'c:d' not imported: a name may not contain '@' or ':' (those mean an ad-hoc destination user@host:port)",
            "\(config):8: host '-oProxyCommand=x' not imported: a name may not begin with '-' (it would read as an option)",
            "\(config):8: host 'tab\\011here' not imported: a name may not contain control characters ('tab\\011here')",
            "\(config):8: host '' not imported: a name may not be empty",
            "\(config):10: host 'ctl' not imported: HostName: an address may not contain control characters ('evil\\033[2J')",
            "\(config):12: host 'dash' not imported: HostName: an address may not begin with '-' (it would read as an option)",
            "\(config):14: host 'optuser' not imported: User: a user name may not begin with '-' (it would read as an option)",
            "\(config):16: host 'mark' not imported: HostName: an address may not begin with '-' (it would read as an option)",
        ] {
            #expect(r.stderr.contains("warning: " + expected + "\n"), "missing: \(expected)\n\(r.stderr)")
        }
        // CR ends the line, as in OpenSSH: no keyword became a host.
        #expect(try h.termhost(["hosts", "list"]).stdout == "lab  127.0.0.1:2222  [imported]\n")
    }

    @Test func hostsAddAndEditRefuseValuesThatBreakTheRulesNamingTheArgument() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let usage = String(try h.termhost(["help", "hosts"]).stdout.dropLast())
        let cases: [([String], String)] = [
            (["add", "x", "1.2.3.4", "--port", "99999"], "termhost hosts add: --port must be a whole number from 1 to 65535, not '99999'"),
            (["add", "x", "1.2.3.4", "--port", "-5"], "termhost hosts add: --port must be a whole number from 1 to 65535, not '-5'"),
            (["add", "bad@name", "1.2.3.4"], "termhost hosts add: NAME 'bad@name': a name may not contain '@' or ':' (those mean an ad-hoc destination user@host:port)"),
            (["add", "a:b", "1.2.3.4"], "termhost hosts add: NAME 'a:b': a name may not contain '@' or ':' (those mean an ad-hoc destination user@host:port)"),
            (["add", "tab\there", "1.2.3.4"], "termhost hosts add: NAME 'tab\\011here': a name may not contain control characters ('tab\\011here')"),
            (["add", "-oProxyCommand=x", "1.2.3.4"], "termhost hosts add: NAME '-oProxyCommand=x': a name may not begin with '-' (it would read as an option)"),
            (["add", "", "1.2.3.4"], "termhost hosts add: NAME '': a name may not be empty"),
            (["add", "x", "-oProxyCommand=x"], "termhost hosts add: ADDRESS '-oProxyCommand=x': an address may not begin with '-' (it would read as an option)"),
            (["add", "x", "1.2.3.4", "--user", "-l"], "termhost hosts add: --user '-l': a user name may not begin with '-' (it would read as an option)"),
            (["add", "x", "1.2.3.4", "--user", "a\u{1b}b"], "termhost hosts add: --user 'a\\033b': a user name may not contain control characters ('a\\033b')"),
            (["add", "x", "1.2.3.4", "--keepalive", "5000000000"], "termhost hosts add: --keepalive must be a whole number of seconds from 0 to 86400, not '5000000000'"),
            (["add", "x", "1.2.3.4", "--keepalive-count", "0"], "termhost hosts add: --keepalive-count must be a whole number of probes from 1 to 1000, not '0'"),
            (["add", "x", "1.2.3.4", "--jump", "a,,b"], "termhost hosts add: --jump 'a,,b': a jump host may not be empty"),
            (["add", "x", "1.2.3.4", "--jump", "1,2,3,4,5,6,7,8,9"], "termhost hosts add: --jump '1,2,3,4,5,6,7,8,9': a jump route may have at most 8 hosts, not 9"),
            (["edit", "lab", "--port", "0"], "termhost hosts edit: --port must be a whole number from 1 to 65535, not '0'"),
            (["edit", "lab", "--address", "a b"], "termhost hosts edit: --address 'a b': an address may not contain spaces"),
            // The SDK parser's wording, the same in every plugin command.
            (["add", "x", "1.2.3.4", "--port"], "termhost hosts add: option '--port' needs a value"),
            (["add", "x", "1.2.3.4", "--prot", "22"], "termhost hosts add: unknown option '--prot'. Did you mean '--port'?\n\(usage)"),
            (["add", "x", "1.2.3.4", "extra"], "termhost hosts add: unexpected argument 'extra'\n\(usage)"),
        ]
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port)])
        for (args, message) in cases {
            let r = try h.termhost(["hosts"] + args)
            #expect(r.status == 2 && r.stderr == message + "\n", "\(args): \(r.output)")
        }
        #expect(try h.termhost(["hosts", "list"]).stdout == "lab  127.0.0.1:\(h.server.port)\n", "nothing was saved or changed")
    }

    @Test func twentyThousandHostsImportWithTheirSettings() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        var text = ""
        for i in 0..<20_000 { text += "Host h\(i)\n  HostName 10.\(i / 65536).\(i / 256 % 256).\(i % 256)\n  Port \(1000 + i)\n" }
        text += "Host h1*\n  User ops\nHost *\n  User everyone\n  IdentityFile ~/.ssh/id_all\n"
        let config = dir.write("home/.ssh/config", text)
        let r = try h.termhost(["hosts", "import", config, "--yes"], timeout: 60)
        #expect(r.status == 0, "\(r.stderr.prefix(2000))")
        #expect(r.stdout.hasSuffix("Imported 20000 host(s) and 2 template(s).\n"), "\(r.stdout.suffix(200))")
        #expect(r.stderr.isEmpty, "\(r.stderr.prefix(2000))")
        let all = try h.termhost(["--json", "hosts", "list"]).stdout
        #expect(all.components(separatedBy: "\"name\" :").count - 1 == 20_002, "the hosts and the templates h1* and *")
        let last = try h.termhost(["hosts", "show", "h19999"]).stdout
        #expect(last.contains("\"address\" : \"10.0.78.31\"") && last.contains("\"port\" : 20999") && last.contains("\"user\" : \"ops\""), "\(last)")
        let first = try h.termhost(["hosts", "show", "h0"]).stdout
        #expect(first.contains("\"port\" : 1000") && first.contains("\"user\" : \"everyone\"") && first.contains("\"identityFile\" : \"~/.ssh/id_all\""), "\(first)")
    }

    @Test func aConfigLargerThanTheLimitIsRefusedWithItsSize() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let path = Self.canonical(dir.write("home/.ssh/config", "Host a\n"))
        #expect(truncate(path, 17 << 20) == 0)   // sparse: costs no disk
        let r = try h.termhost(["hosts", "import", path, "--yes"])
        #expect(r.status == 1)
        #expect(r.stderr == "termhost hosts import: \(path) is larger than the limit (17825792 bytes; an import reads at most 16 MiB (16777216 bytes)); nothing imported\n")
    }
}
