import CTermhost
import TermhostSDK

/// termhost.environment/1 (services/environment.h): a scene's user environment, from
/// HostServices.environments.
enum EnvironmentBridge {
    nonisolated(unsafe) static let table: UnsafeMutablePointer<termhost_host_environment_t> = {
        let t = UnsafeMutablePointer<termhost_host_environment_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_environment_t(
            struct_size: UInt32(MemoryLayout<termhost_host_environment_t>.size),
            get_variable: { host, scene, name, buf, size, needed, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get_variable: host is NULL") }
                let nameText: String
                do throws(BoundaryArguments.Refusal) {
                    nameText = try BoundaryArguments.text(name, "name", call: "get_variable")
                } catch { return HostBridge.refuse(err, error) }
                guard EnvironmentName.isValid(nameText) else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT,
                                        "get_variable: '\(VisibleText.of(nameText))' is not a variable name (letters, digits and '_', not starting with a digit)")
                }
                guard let value = HostBridge.context(host).services.environments.value(nameText, scene: scene) else {
                    return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "\(nameText) is not set")
                }
                let text = Array(value.utf8)
                needed?.pointee = text.count + 1
                guard let buf, size > text.count else {
                    return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "\(nameText) needs \(text.count + 1) bytes")
                }
                // An empty value is set too; an empty array may have no base address to copy from.
                if !text.isEmpty { text.withUnsafeBytes { UnsafeMutableRawPointer(buf).copyMemory(from: $0.baseAddress!, byteCount: text.count) } }
                buf[text.count] = 0
                return termhost_status(TERMHOST_OK)
            },
            list_names: { host, scene, buf, size, written, needed, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list_names: host is NULL") }
                guard let written else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list_names: written is NULL") }
                written.pointee = 0
                let names = HostBridge.context(host).services.environments.names(scene: scene).filter(EnvironmentName.isValid)
                var bytes: [UInt8] = []
                for name in names { bytes += name.utf8; bytes.append(0) }
                needed?.pointee = bytes.count
                if bytes.isEmpty { return termhost_status(TERMHOST_OK) }
                guard let buf, size >= bytes.count else {
                    return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "the names need \(bytes.count) bytes")
                }
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(buf).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                written.pointee = bytes.count
                return termhost_status(TERMHOST_OK)
            }))
        return t
    }()
}
