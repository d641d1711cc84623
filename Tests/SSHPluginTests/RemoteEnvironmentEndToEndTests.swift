import Foundation
import Testing
import TestSupport

/// SendEnv and SetEnv, saved with the host and given with `-o`, against an sshd whose
/// AcceptEnv takes LC_* and TERMHOST_T_* only: what it accepts reaches the command, what it
/// refuses is left out and the command still runs, as with OpenSSH's ssh.
@Suite(.timeLimit(.minutes(2))) struct RemoteEnvironmentEndToEndTests {
    static let show = "env | grep -E '^(LC_TEST|TERMHOST_T_|NOT_ACCEPTED)' | sort"

    static func harness(_ dir: TemporaryDirectory) throws -> SSHHarness {
        var h = try SSHHarness(dir: dir, serverConfig: "AcceptEnv LC_* TERMHOST_T_*\n")
        h.extraEnvironment = ["LC_TEST": "x y", "TERMHOST_T_A": "a", "TERMHOST_T_B": "b", "NOT_ACCEPTED": "n"]
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--send-env", "LC_*", "--send-env", "TERMHOST_T_A", "--send-env", "NOT_*",
                                  "--set-env", "TERMHOST_T_SET=saved value", "--set-env", "NOT_ACCEPTED_SET=1"])
        #expect(add.status == 0, "\(add.output)")
        return h
    }

    @Test func theSavedHostsVariablesReachTheCommandAsAcceptEnvAllows() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let expected = "LC_TEST=x y\nTERMHOST_T_A=a\nTERMHOST_T_SET=saved value\n"
        let exec = try h.termhost(["exec", "lab", "--", Self.show])
        #expect(exec.status == 0 && exec.stdout == expected && exec.stderr.isEmpty, "\(exec.output)")
        let command = try h.termhost(["ssh", "lab", Self.show])
        #expect(command.status == 0 && command.stdout == expected, "\(command.output)")
        // A shell fed from a pipe gets them too.
        let shell = try h.termhost(["ssh", "lab"], stdin: Self.show + "\n")
        #expect(shell.status == 0 && shell.stdout == expected, "\(shell.output)")
        // And a command on a remote terminal (-tt), which is another code path.
        let terminal = try h.termhost(["ssh", "-tt", "lab", "echo", "$TERMHOST_T_SET"])
        #expect(terminal.stdout.contains("saved value"), "\(terminal.output)")
        let shown = try h.termhost(["hosts", "show", "lab"])
        #expect(shown.stdout.contains("TERMHOST_T_SET=saved value") && shown.stdout.contains("LC_*"), "\(shown.output)")
    }

    @Test func dashOAddsToTheHostsListsAndReplacesASetEnvOfTheSameName() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", "-o", "SendEnv=TERMHOST_T_B", "-o", "SendEnv -LC_*", "-o", "SetEnv=TERMHOST_T_SET=cli TERMHOST_T_NEW=new",
                                "lab", "--", Self.show])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == "TERMHOST_T_A=a\nTERMHOST_T_B=b\nTERMHOST_T_NEW=new\nTERMHOST_T_SET=cli\n", "\(r.output)")
        // An ad-hoc destination takes them too.
        let adHoc = try h.termhost(["exec", "-o", "SetEnv=TERMHOST_T_SET=ad-hoc", h.target, "--", "echo", "$TERMHOST_T_SET"])
        #expect(adHoc.status == 0 && adHoc.stdout == "ad-hoc\n", "\(adHoc.output)")
    }

    @Test func anOptionTermhostDoesNotTakeOrABadEntryIsAUsageErrorNamingIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        defer { h.server.stop() }
        let port = try h.termhost(["exec", "-o", "Port=2222", "lab", "--", "true"])
        #expect(port.status == 2 && port.stderr.hasPrefix("termhost exec: -o 'Port=2222': termhost takes only SendEnv and SetEnv with -o"), "\(port.output)")
        let badName = try h.termhost(["ssh", "-o", "SetEnv=1BAD=x", "lab", "true"])
        #expect(badName.status == 2 && badName.stderr.contains("a SetEnv entry is NAME=VALUE"), "\(badName.output)")
        let badPattern = try h.termhost(["hosts", "edit", "lab", "--send-env", "LC_$(id)"])
        #expect(badPattern.status == 2 && badPattern.stderr.contains("a SendEnv pattern is a variable name"), "\(badPattern.output)")
        let control = try h.termhost(["hosts", "edit", "lab", "--set-env", "TERMHOST_T_X=a\u{1b}[2J"])
        #expect(control.status == 2 && control.stderr.contains("may not contain control characters"), "\(control.output)")
        // An empty value clears the list.
        let cleared = try h.termhost(["hosts", "edit", "lab", "--send-env", "", "--set-env", ""])
        #expect(cleared.status == 0, "\(cleared.output)")
        let none = try h.termhost(["exec", "lab", "--", Self.show])
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none.output)")
    }
}
