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
    /// `termhost_host_environment_t.list_names` (ABI 1.7): the names of the variables set in
    /// the environment of the user whose command runs in `scene`, in no set order. A host
    /// older than 1.6 runs commands in the user's process, whose environ() answers; a 1.6 host
    /// can name no variables, and gives nil.
    public func variableNames(scene: UInt64) -> [String]? {
        guard let service = typed(TERMHOST_SERVICE_ENVIRONMENT, termhost_host_environment_t.self) else {
            return ProcessInfo.processInfo.environment.keys.filter(EnvironmentName.isValid)
        }
        guard let list = TermhostStruct.member(service, \.list_names) else { return nil }
        var size = 4096
        while true {  // grows to what the host says it needs
            var buf = [CChar](repeating: 0, count: size)
            var written = 0, needed = 0
            var err = termhostEmptyError()
            let rc = list(raw, scene, &buf, size, &written, &needed, &err)
            switch Int(rc) {
            case TERMHOST_OK:
                return buf[..<min(written, size)].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            case TERMHOST_ERR_TOO_LARGE where needed > size: size = needed
            default: return nil
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
