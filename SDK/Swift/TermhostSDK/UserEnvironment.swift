import CTermhost
import Foundation
import Glibc

extension PluginHost {
    /// `termhost_host_environment_t.get_variable`: the value of `name` in the environment of the
    /// user whose command runs in `scene` (in the daemon, the `termhost` client's; in the CLI and
    /// for scene 0, this process's); nil when unset there. A host older than ABI 1.6 has no such
    /// service, and its commands run in the user's own process: getenv() answers then.
    public func variable(_ name: String, scene: UInt64) -> String? {
        guard let service = typed(TERMHOST_SERVICE_ENVIRONMENT, termhost_host_environment_t.self) else {
            return getenv(name).map { String(cString: $0) }
        }
        var size = 256
        while true {  // grows once to what the host says it needs
            var buf = [CChar](repeating: 0, count: size)
            var needed = 0
            var err = termhostEmptyError()
            let rc = service.pointee.get_variable(raw, scene, name, &buf, size, &needed, &err)
            switch Int(rc) {
            case TERMHOST_OK: return stringFromBuffer(buf)
            case TERMHOST_ERR_TOO_LARGE where needed > size: size = needed
            default: return nil   // not set, or not a name a variable can have
            }
        }
    }
}

extension PluginHost {
    /// The directory the user typed the command in, for relative paths on its command line: in
    /// the daemon the client's working directory (it sends it as `PWD`), not the daemon's; in
    /// the CLI and on an older host, this process's. An absolute path, always.
    public func workingDirectory(scene: UInt64) -> String {
        if let pwd = variable("PWD", scene: scene), pwd.utf8.first == UInt8(ascii: "/") { return pwd }
        return FileManager.default.currentDirectoryPath
    }
}
