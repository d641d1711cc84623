import Foundation
import TestSupport

/// Runs the built `termhost` binary in a scratch environment.
struct CLI {
    let dir: TemporaryDirectory
    let plugins: String
    var extraEnvironment: [String: String] = [:]

    init(_ dir: TemporaryDirectory) {
        self.dir = dir
        plugins = dir.sub("plugins")
    }

    var environment: [String: String] { Fixtures.environment(dir, pluginPath: plugins, extra: extraEnvironment) }

    @discardableResult
    func run(_ args: String..., stdin: String? = nil, timeout: Double = 60) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: environment, stdin: stdin, timeout: timeout)
    }

    func policy(_ json: String) -> String { dir.write("policy.json", json) }
}
