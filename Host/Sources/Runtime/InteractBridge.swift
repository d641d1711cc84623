import CTermhost
import TermhostSDK
import TermhostServices

/// `termhost.interact/1` (SDK/include/termhost/services/interact.h) over the host's
/// `Interaction`: prompts on the terminal of the scene the plugin names.
extension HostBridge {
    static func interactFailure(_ err: UnsafeMutablePointer<termhost_error_t>?, _ error: any Error) -> termhost_status {
        guard let e = error as? Interaction.Failure else { return termhostFail(err, TERMHOST_ERR_INTERNAL, "\(error)") }
        return switch e {
        case .nonInteractive: termhostFail(err, TERMHOST_ERR_NON_INTERACTIVE, e.description)
        case .cancelled: termhostFail(err, TERMHOST_ERR_CANCELLED, e.description)
        case .tooLong: termhostFail(err, TERMHOST_ERR_TOO_LARGE, e.description)
        }
    }

    nonisolated(unsafe) static let interactTable: UnsafeMutablePointer<termhost_host_interact_t> = {
        let t = UnsafeMutablePointer<termhost_host_interact_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_interact_t(
            struct_size: UInt32(MemoryLayout<termhost_host_interact_t>.size),
            prompt_text: { host, scene, prompt, echo, buf, size, err in
                guard let host, let buf, size > 0 else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "prompt_text: NULL argument") }
                do {
                    var answer = Array(try HostBridge.context(host).services.interaction.promptText(scene: scene, prompt: HostBridge.str(prompt), echo: echo != 0).utf8)
                    defer { for i in answer.indices { answer[i] = 0 } }
                    guard answer.count < size else { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "the answer does not fit in \(size) bytes") }
                    for (i, b) in answer.enumerated() { buf[i] = CChar(bitPattern: b) }
                    buf[answer.count] = 0
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.interactFailure(err, error) }
            },
            confirm: { host, scene, question, answer, err in
                guard let host, let answer else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "confirm: NULL argument") }
                do {
                    answer.pointee = try HostBridge.context(host).services.interaction.confirm(scene: scene, question: HostBridge.str(question)) ? 1 : 0
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.interactFailure(err, error) }
            },
            choose: { host, scene, prompt, choices, count, chosen, err in
                guard let host, let chosen, count > 0, let choices else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "choose: no choices") }
                let list = (0..<Int(count)).map { HostBridge.str(choices[$0]) }
                do {
                    chosen.pointee = UInt32(try HostBridge.context(host).services.interaction.choose(scene: scene, prompt: HostBridge.str(prompt), choices: list))
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.interactFailure(err, error) }
            },
            notify: { host, scene, message in
                guard let host else { return }
                let ctx = HostBridge.context(host)
                if !ctx.services.interaction.notify(scene: scene, HostBridge.str(message)) {
                    ctx.services.log.log(.info, ctx.pluginID, HostBridge.str(message))
                }
            },
            can_prompt: { host, scene in
                guard let host, scene != 0 else { return 0 }
                return HostBridge.context(host).services.interaction.hasTerminal(scene) ? 1 : 0
            }))
        return t
    }()
}
