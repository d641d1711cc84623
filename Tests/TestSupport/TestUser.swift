import Foundation
import Glibc

/// A real second user made with `useradd` for a test that must be refused by uid (no home, no
/// shell, a name of its own per process), and removed with `userdel` by `remove()`. Needs root:
/// `available` says whether this run can make one.
public struct TestUser: Sendable {
    public let name: String
    public let uid: uid_t
    public let gid: gid_t

    public static var available: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd") }

    /// Makes the user `termhost-t<pid>-<tag>`; tag keeps two tests of one process apart.
    public init(tag: String) throws {
        name = "termhost-t\(getpid())-\(tag)"
        let add = try Shell.run("/usr/sbin/useradd", ["--system", "--no-create-home", "--user-group",
                                                      "--shell", "/usr/sbin/nologin", name])
        guard add.status == 0 else { throw Shell.Failure(description: "useradd \(name) failed: \(add.output)") }
        guard let entry = getpwnam(name) else {
            _ = try? Shell.run("/usr/sbin/userdel", [name])
            throw Shell.Failure(description: "useradd \(name) made no user that getpwnam finds")
        }
        uid = entry.pointee.pw_uid
        gid = entry.pointee.pw_gid
    }

    /// Runs a program as this user (setpriv: real and effective ids, no supplementary groups).
    public func run(_ program: String, _ args: [String], environment: [String: String]) throws -> Shell.Result {
        try Shell.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", program] + args,
                      environment: environment)
    }

    public func remove() {
        _ = try? Shell.run("/usr/sbin/userdel", [name])
    }
}
