import Foundation
import Testing
import TestSupport

/// Every host service through the C ABI, as a third-party C plugin uses it.
@Suite struct HostServicesEndToEndTests {
    @Test func secretsRoundTripAndNeverReachTheStoreOrTheLog() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        let put = try cli.run("--log-level", "debug", "svc", "secret-put", "correct horse battery")
        #expect(put.status == 0, "\(put.output)")
        let id = put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.hasPrefix("sec_"))
        #expect(try cli.run("svc", "secret-get", id).stdout == "correct horse battery\n")
        for file in ["data/termhost/termhost.db", "data/termhost/termhost.db-wal", "state/termhost/termhost.log"] {
            let bytes = FileManager.default.contents(atPath: dir.path + "/" + file) ?? Data()
            #expect(bytes.range(of: Data("correct horse".utf8)) == nil, "\(file) must not contain the secret")
        }
        #expect(try cli.run("svc", "secret-rm", id).status == 0)
        let gone = try cli.run("svc", "secret-get", id)
        #expect(gone.status == 1 && gone.stderr == "error 2: no secret with ID '\(id)'\n")
    }

    @Test func storeListsRemovesAndJournalsWithTombstonesAndTransactionsRollBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        let r = try cli.run("svc", "store")
        #expect(r.stdout == """
        a=1
        1 org.test.services c b put
        2 org.test.services c a put
        3 org.test.services c b delete

        """)
        let tx = try cli.run("svc", "transaction")
        #expect(tx.stdout == "transaction: 7 body gave up\n")
        #expect(tx.stderr.hasPrefix("error 2: no key 'inside'"), "the body's put must have been rolled back")
    }

    @Test func settingsComeFromThePolicyAsJSONAndReportTheSizeNeeded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        _ = cli.policy(#"{ "settings": { "org.test.services": { "port": 2222, "banner": "welcome to prod" } } }"#)
        #expect(try cli.run("svc", "setting", "port").stdout == "2222\n")
        #expect(try cli.run("svc", "setting", "banner").stdout == "\"welcome to prod\" (needed 18 bytes)\n")
        let unset = try cli.run("svc", "setting", "nope")
        #expect(unset.status == 1 && unset.stderr == "error 2: setting 'nope' of 'org.test.services' is not set\n")
    }

    @Test func eventsAreDeliveredUntilUnsubscribed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        #expect(try cli.run("svc", "events").stdout == "event org.test.ping {\"n\":1}\n")
    }

    @Test func commandsServiceListsAndRunsOtherFeaturesCommands() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "f", id: "org.test.f")
        #expect(try cli.run("svc", "commands").stdout == "fixture (org.test.f)\nsvc (org.test.services)\n")
        let run = try cli.run("svc", "run", "fixture", "fail")
        #expect(run.stdout == "fixture ran with 1 argument(s) [fail]\nstatus 1\n")
        #expect(try cli.run("svc", "run", "nothing").stderr == "error 2: no enabled feature contributes command 'nothing'\n")
    }

    @Test func promptsFailClosedWithoutATerminalOrWithNonInteractive() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        let piped = try cli.run("svc", "confirm", stdin: "yes\n")
        #expect(piped.status == 1)
        #expect(piped.stderr.hasPrefix("error 9: cannot ask 'Trust this host?': scene "))
        #expect(piped.stderr.hasSuffix(" has no terminal\n"))
    }

    @Test func secretPromptOnARealTerminalTurnsEchoOffAndNonInteractiveRefuses() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.servicesPlugin(in: cli.plugins)
        let tty = try TmuxSession(command: [Paths.termhost, "svc", "prompt"], environment: cli.environment)
        defer { tty.close() }
        #expect(tty.waitFor("Passphrase:").contains("Passphrase:"))
        tty.type("hunter2")
        let screen = tty.waitFor("[exit")
        #expect(screen.contains("got 7 characters"))
        #expect(screen.contains("[exit 0]"))
        #expect(!screen.contains("hunter2"), "a secret prompt must not echo what is typed")

        let refused = try TmuxSession(command: [Paths.termhost, "--non-interactive", "svc", "confirm"], environment: cli.environment)
        defer { refused.close() }
        let s = refused.waitFor("[exit")
        #expect(s.contains("error 9: cannot ask 'Trust this host?': termhost runs with --non-interactive"))
        #expect(s.contains("[exit 1]"))
    }
}

/// The same services through the Swift SDK layer, from a Swift plugin.
@Suite struct SwiftSDKEndToEndTests {
    @Test func everySwiftServiceWrapperWorks() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.swiftServices(in: cli.plugins)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "f", id: "org.test.f")
        _ = cli.policy(#"{ "settings": { "org.test.swift-services": { "mode": "fast" } } }"#)
        #expect(try cli.run("swsvc", "transaction").stdout == "rolled back: nothing\n1 c kept put\n")
        #expect(try cli.run("swsvc", "events").stdout == "org.test.swift {\"n\":1}\n")
        #expect(try cli.run("swsvc", "commands").stdout == "fixture=org.test.f swsvc=org.test.swift-services\n")
        #expect(try cli.run("swsvc", "secrets").stdout == "swift-secret\n")
        #expect(try cli.run("swsvc", "setting", "mode").stdout == "\"fast\"\n")
        let choose = try cli.run("swsvc", "choose")
        #expect(choose.status == 1 && choose.stderr.hasPrefix("error: cannot ask 'Pick': scene "))
    }
}
