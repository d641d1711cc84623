import Foundation
import Testing
import TestSupport

/// Downloads from a server that lies (HostileSFTPServer): names that are paths or control
/// sequences, trees without end, a 2^63-byte file, a directory swapped for a link meanwhile.
/// Nothing may be written outside the target, termhost must not crash or grow without bound,
/// and every refusal is named.
@Suite struct HostileServerTests {
    static func host(_ h: SSHHarness) -> String { "\(NSUserName())@127.0.0.1:\(h.server.port)" }

    /// Every regular file under root, relative.
    static func files(under root: String) -> [String] {
        Files.tree(root).filter { $0.value != "dir" }.map(\.key).sorted()
    }

    @Test func namesThatArePathsOrControlSequencesAreRefusedAndTheRestArrives() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try HostileSFTPServer.harness(dir)
        defer { h.server.stop() }
        let target = dir.sub("t/target")
        let r = try h.sftp("get", ["-r", h.remote("/evil"), target])
        let host = Self.host(h)
        #expect(r.status == 1, "\(r.output)\n\(h.server.log)")
        // The honest files arrived; nothing else was written, inside the target or out of it.
        #expect(Self.files(under: dir.path + "/t") == ["target/evil/ok.txt", "target/evil/sub/inner.txt"], "\(r.output)")
        for outside in ["x", "t/x", "escaped", "t/escaped", "abs", "t/target/evil/a"] { #expect(!Files.exists(dir.path + "/" + outside)) }
        for line in [
            "sftp: \(host):/evil: refused the name '../../x' the server listed: it contains '/' (a path, not a name); nothing was written for it",
            "sftp: \(host):/evil: refused the name 'a/b' the server listed: it contains '/' (a path, not a name); nothing was written for it",
            "sftp: \(host):/evil: refused the name '/abs' the server listed: it contains '/' (a path, not a name); nothing was written for it",
            "sftp: \(host):/evil: refused the name '' the server listed: an empty name; nothing was written for it",
            "sftp: \(host):/evil: refused the name 'bad\\012name' the server listed: it contains control characters; nothing was written for it",
            "sftp: \(host):/evil: refused the name 'esc\\033[31mred' the server listed: it contains control characters; nothing was written for it",
            "sftp: \(host):/evil/sub: refused the name '../../../escaped' the server listed: it contains '/' (a path, not a name); nothing was written for it",
        ] {
            #expect(r.stderr.contains(line + "\n"), "\(line)\n\(r.stderr)")
        }
        #expect(!r.output.contains("\u{1B}") && !r.output.contains("bad\nname"), "\(r.output)")
        #expect(r.stdout.hasPrefix("downloaded 2 of 9 files, ") && r.stdout.contains(", 7 failed"), "\(r.stdout)")
    }

    /// A directory that holds itself at every level: the walk stops 64 levels down, names the
    /// path and the limit, and still downloads what it planned.
    @Test func aTreeWithoutEndStopsAtTheDepthLimit() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try HostileSFTPServer.harness(dir)
        defer { h.server.stop() }
        let target = dir.sub("target")
        let r = try h.sftp("get", ["-r", h.remote("/deep"), target])
        #expect(r.status == 1, "\(r.output)\n\(h.server.log)")
        let deepest = "/deep" + String(repeating: "/d", count: 65)
        #expect(r.stderr.contains("sftp: \(Self.host(h)):\(deepest): deeper than 64 directory levels below the source (the limit of a recursive get); not downloaded\n"), "\(r.stderr)")
        // The 64 levels it planned were made, and not one more.
        let made = target + "/deep" + String(repeating: "/d", count: 64)
        #expect(Files.exists(made) && !Files.exists(made + "/d"), "\(r.output)")
    }

    /// A listing that never ends: planning stops at the entry limit with a message naming the
    /// directory and the limit, before anything is written. (`ls` and the files service read
    /// through the same bounded loop, RemoteFS.list(_:upTo:); a second million-entry run would
    /// double this test's time.)
    @Test func aListingWithoutEndStopsAtTheEntryLimit() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try HostileSFTPServer.harness(dir)
        defer { h.server.stop() }
        let target = dir.sub("target")
        let r = try h.sftp("get", ["-r", h.remote("/wide"), target])
        #expect(r.status == 1, "\(r.output)\n\(h.server.log)")
        #expect(r.stderr.contains("sftp: \(Self.host(h)):/wide: the tree has more than 1000000 entries (the limit of one recursive get); nothing was downloaded, get its parts one by one\n"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
    }

    /// A name longer than any file system holds (70,000 bytes, past the 65,535 the listing
    /// reads): the listing fails as the server's fault, not as a lost connection to retry.
    @Test func aNameLongerThanTheListingBufferFailsTheListingAsTheServersFault() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try HostileSFTPServer.harness(dir)
        defer { h.server.stop() }
        let r = try h.sftp("get", ["-r", h.remote("/long"), dir.sub("target")])
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr == "sftp: \(Self.host(h)):/long: the server listed a name longer than 65535 bytes; nothing more was read\n", "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/target").isEmpty)
    }

    /// A server that claims a file of 2^63 bytes while the local disk fills (the file-size
    /// limit: EFBIG): the download fails with the system's reason and keeps nothing. It used to
    /// trap (SIGILL) counting the unfinished segment's length as an Int.
    @Test func aClaimedHugeFileOnAFullDiskFailsWithoutACrash() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try HostileSFTPServer.harness(dir)
        defer { h.server.stop() }
        let target = dir.sub("local") + "/huge.bin"
        let script = "trap '' XFSZ; ulimit -f 2048; exec \"$0\" \"$@\""
        let r = try Shell.run("/bin/sh", ["-c", script, Paths.termhost, "sftp", "get", h.remote("/huge.bin"), target,
                                          "-P", String(h.server.port)], environment: h.environment)
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("sftp: cannot write \(target): File too large\n"), "\(r.stderr)")
        #expect(!Files.exists(target) && !Files.exists(Files.partial(of: target)), "\(r.output)")
    }

    /// Another process swaps a directory the download just made for a link to elsewhere, after
    /// the plan and before the file is written: the link is refused, nothing lands elsewhere.
    @Test func aDirectoryLinkPlantedDuringTheDownloadIsNotFollowed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let target = dir.sub("target"), elsewhere = dir.sub("elsewhere")
        let h = try HostileSFTPServer.harness(dir, plant: (target + "/plant/dir", elsewhere))
        defer { h.server.stop() }
        let r = try h.sftp("get", ["-r", h.remote("/plant"), target])
        #expect(r.status == 1, "\(r.output)\n\(h.server.log)")
        #expect(r.stderr.contains("sftp: \(target)/plant/dir is a symbolic link; not followed, nothing was written through it\n"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty, "\(r.output)")
    }
}
