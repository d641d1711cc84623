import Foundation

/// Where the tests find the repository and the built products.
public enum Paths {
    /// The repository root, from this file's location.
    public static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    public static var sdkInclude: String { root + "/SDK/include" }

    /// The directory of the test binary: SwiftPM puts `termhost`, `termhost-probe` and the
    /// plugin libraries beside it.
    public static let products: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // On Linux the test runner is `<products>/TermhostPackageTests.xctest`.
        if !FileManager.default.fileExists(atPath: dir.appendingPathComponent("termhost").path),
           FileManager.default.fileExists(atPath: dir.deletingLastPathComponent().appendingPathComponent("termhost").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }()

    public static var termhost: String { products + "/termhost" }
    public static var probe: String { products + "/termhost-probe" }
}

/// A fresh directory under /tmp, removed by `remove()` (tests call it in `defer`).
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "termhost-test") {
        let template = "/tmp/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    public func sub(_ name: String) -> String {
        let p = path + "/" + name
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }

    public func write(_ name: String, _ text: String) -> String {
        let p = path + "/" + name
        try? FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: p, contents: Data(text.utf8))
        return p
    }

    /// The host's log of a termhost run in this directory's environment (Fixtures.environment:
    /// XDG_STATE_HOME under it); empty when there is none yet.
    public var hostLog: String { (try? String(contentsOfFile: path + "/state/termhost/termhost.log", encoding: .utf8)) ?? "" }

    public func remove() {
        // Restore permissions changed by tests so the tree can be deleted.
        _ = try? Shell.run("/bin/chmod", ["-R", "u+rwx", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
