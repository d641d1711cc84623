import Foundation
import Glibc
import Testing
import TestSupport

/// An upload's ring lives in /dev/shm; when /dev/shm cannot hold it (Docker's is 64 MB, shared
/// by every process of the container), the upload keeps a plain buffer instead of dying of
/// SIGBUS on the first page the full file system cannot back.
@Suite struct UploadRingFallbackEndToEndTests {
    @Test func anUploadWithA1MiBDevShmCompletesWithThePlainBuffer() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.withSFTP(dir)
        defer { h.server.stop() }
        let local = dir.sub("local"), remote = dir.sub("remote")
        Files.random(local + "/data.bin", bytes: 5 * 1024 * 1024 + 17)
        // termhost in a mount namespace of its own whose /dev/shm is 1 MiB (an upload's ring is
        // 2.1 MB); unprivileged, a user namespace makes the mount possible.
        let namespace = getuid() == 0 ? ["-m"] : ["-r", "-m"]
        let script = "mount -t tmpfs -o size=1m tmpfs /dev/shm && exec \"$@\""
        let args = ["sftp", "put", local + "/data.bin", h.remote(remote + "/"), "-P", String(h.server.port)]
        let put = try Shell.run("/usr/bin/unshare", namespace + ["/bin/sh", "-c", script, "sh", Paths.termhost] + args,
                                environment: h.environment)
        #expect(put.status == 0, "\(put.output)\n\(h.server.log)")
        #expect(Files.sha256(remote + "/data.bin") == Files.sha256(local + "/data.bin"))
    }
}
