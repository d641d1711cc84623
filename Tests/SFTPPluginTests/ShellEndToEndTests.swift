import Foundation
import Testing
import TestSupport

/// `termhost sftp HOST`: the interactive shell, fed a script (as sftp -b) and typed into on a
/// real terminal (tmux) for line editing and history.
@Suite struct ShellEndToEndTests {
    @Test func aScriptBrowsesChangesAndTransfersFiles() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote"), local = dir.sub("local")
        Files.random(remote + "/seed.bin", bytes: 4000)
        Files.random(local + "/up load.bin", bytes: 9000)
        let script = """
        cd \(remote)
        pwd
        mkdir made
        rename made "re named"
        chmod 700 "re named"
        stat "re named"
        lcd \(local)
        put "up load.bin"
        get seed.bin
        ls
        ls -l seed.bin
        rm seed.bin
        rmdir "re named"
        df
        -frobnicate
        ls
        """
        let r = try h.termhost(["sftp", "-P", String(h.server.port), "\(NSUserName())@127.0.0.1"], stdin: script)
        #expect(r.status == 0, "\(r.output)")
        let out = r.stdout
        #expect(out.contains("Remote working directory: \(remote)\n"), "\(out)")
        #expect(out.contains(#"drwx------"#) && out.contains(" re named\n"), "\(out)")
        #expect(out.contains("re named\nseed.bin\nup load.bin\n"), "ls after the changes:\n\(out)")
        #expect(out.contains("Size         Used        Avail"))
        #expect(out.hasSuffix("up load.bin\n"), "the last ls, after rm and rmdir:\n\(out)")
        #expect(r.stderr.contains("Invalid command 'frobnicate' (help lists them)."), "\(r.stderr)")
        #expect(Files.sha256(remote + "/up load.bin") == Files.sha256(local + "/up load.bin"))
        #expect(Files.size(local + "/seed.bin") == 4000)
        #expect(!Files.exists(remote + "/seed.bin") && !Files.exists(remote + "/re named"))
    }

    @Test func aScriptStopsAtTheFirstFailingCommandAsSftpDashBDoes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote")
        let r = try h.termhost(["sftp", "-P", String(h.server.port), "\(NSUserName())@127.0.0.1"],
                               stdin: "cd \(remote)\n-rm nothing-here\nrmdir also-missing\nmkdir never\n")
        #expect(r.status == 1)
        #expect(r.stderr.contains("nothing-here: No such file or directory"), "\(r.stderr)")
        #expect(r.stderr.contains("also-missing: No such file or directory"))
        #expect(!Files.exists(remote + "/never"), "the script stopped at the failing rmdir")
    }

    /// On a terminal, a transfer draws a progress bar with its rate and ETA on stderr, then
    /// leaves the summary line.
    @Test func aTransferOnATerminalShowsAProgressBarWithRateAndETA() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote") + "/bar.bin", local = dir.sub("local")
        Files.random(remote, bytes: 3 << 20)
        // 8 Mbit/s: about three seconds, several redraws.
        let tty = try TmuxSession(command: [Paths.termhost, "sftp", "get", "-l", "8000", "-P", String(h.server.port),
                                            h.remote(remote), local], environment: h.environment)
        defer { tty.close() }
        let drawing = tty.waitFor("ETA")
        #expect(drawing.contains("bar.bin [") && drawing.contains("/s ETA 0:0") && drawing.contains(" 0/1"), "\(drawing)")
        let done = tty.waitFor("[exit 0]")
        #expect(done.contains("downloaded 1 of 1 file, 3.1 MB in "), "\(done)")
        #expect(Files.sha256(local + "/bar.bin") == Files.sha256(remote))
    }

    @Test func theTerminalLineEditorHasHistoryAndCursorMotion() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let remote = dir.sub("remote")
        try FileManager.default.createDirectory(atPath: remote + "/alpha", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: remote + "/beta", withIntermediateDirectories: true)
        let tty = try TmuxSession(command: [Paths.termhost, "sftp", "-P", String(h.server.port), "\(NSUserName())@127.0.0.1"],
                                  environment: h.environment)
        defer { tty.close() }
        // capture-pane drops trailing blanks: the prompt shows as "sftp>".
        tty.waitFor("sftp>")
        tty.type("cd \(remote)/alpha")
        tty.type("pwd")
        tty.waitFor("Remote working directory: \(remote)/alpha")
        // Up twice recalls "cd .../alpha"; Backspace x5 and "beta" edit it.
        tty.press("Up")
        tty.press("Up")
        tty.press("BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
        tty.type("beta", enter: true)
        tty.press("Up", "Up")   // "pwd" again
        tty.press("Enter")
        let screen = tty.waitFor("Remote working directory: \(remote)/beta")
        #expect(screen.contains("Remote working directory: \(remote)/beta"), "\(screen)")
        // Ctrl-A goes to the start of the line: "wd" becomes "pwd".
        tty.type("wd", enter: false)
        tty.press("C-a")
        tty.type("p", enter: true)
        #expect(tty.waitFor("Remote working directory:", count: 3).components(separatedBy: "Remote working directory:").count - 1 == 3)
        // Ctrl-C clears the line being typed; it does not end the shell.
        tty.type("this will go", enter: false)
        tty.press("C-c")
        tty.type("pwd")
        #expect(tty.waitFor("Remote working directory:", count: 4).components(separatedBy: "Remote working directory:").count - 1 == 4)
        tty.type("bye")
        let t0 = Date()
        let end = tty.waitFor("[exit 0]")
        #expect(end.contains("[exit 0]") && Date().timeIntervalSince(t0) < 5, "\(end)")
    }
}
