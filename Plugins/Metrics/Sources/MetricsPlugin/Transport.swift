import CTermhost
import MetricsCore
import TermhostSDK

/// The SSH plugin's transport service ("org.termhost.ssh.transport/1") as the sampler uses it:
/// open a connection, open a bridged exec channel, close. No connect, trust or auth code here.
struct Transport: @unchecked Sendable {
    let host: PluginHost
    let vtable: UnsafePointer<termhost_ssh_transport_t>

    /// nil when the SSH plugin is missing, or too old to have open_exec.
    init?(_ host: PluginHost) {
        guard let raw = host.service(TERMHOST_SSH_TRANSPORT) else { return nil }
        let v = raw.assumingMemoryBound(to: termhost_ssh_transport_t.self)
        guard TermhostStruct.has(UnsafePointer(v), \.open_exec), v.pointee.open_exec != nil else { return nil }
        self.host = host
        vtable = v
    }

    /// Connects (host key and authentication inside, prompting on scene when one is given).
    func open(_ destination: String, scene: UInt64) -> Result<OpaquePointer, MonitorState.Failure> {
        var connection: OpaquePointer?
        var err = termhostEmptyError()
        let rc = vtable.pointee.open(host.raw, scene, destination, &connection, &err)
        guard rc == Int32(TERMHOST_OK), let connection else {
            return .failure(FailureText.open(denied: rc == Int32(TERMHOST_ERR_DENIED), message: termhostErrorMessage(err),
                                              host: destination, code: rc))
        }
        return .success(connection)
    }

    func openExec(_ connection: OpaquePointer, _ command: String) -> Result<Int32, MonitorState.Failure> {
        var fd: Int32 = -1
        var err = termhostEmptyError()
        let rc = vtable.pointee.open_exec!(connection, command, &fd, &err)
        guard rc == Int32(TERMHOST_OK) else { return .failure(FailureText.exec(message: termhostErrorMessage(err))) }
        return .success(fd)
    }

    func close(_ connection: OpaquePointer) { vtable.pointee.close(connection) }
}
