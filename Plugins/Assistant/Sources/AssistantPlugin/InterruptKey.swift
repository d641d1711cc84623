import AssistantCore
import Foundation
import Synchronization

/// Ctrl-C in `termhost assistant` stops the run, not the program. While a run streams, the
/// terminal's ISIG is off, so Ctrl-C arrives as the byte 0x03 on standard input instead of as
/// SIGINT (which would shut the host down); a thread watches for it and stops the run. The
/// terminal's mode is restored around approval prompts (`paused`) and when the run ends.
/// Without a terminal on standard input nothing changes: SIGINT stops the run and the program.
final class InterruptKey: Sendable {
    private let fd: Int32
    private let control: RunControl
    private let saved: termios
    private let state = Mutex((paused: false, done: false))
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching `fd`, or returns nil when it is not a terminal.
    init?(fd: Int32, control: RunControl) {
        guard isatty(fd) == 1 else { return nil }
        var mode = termios()
        guard tcgetattr(fd, &mode) == 0 else { return nil }
        self.fd = fd
        self.control = control
        self.saved = mode
        setRaw(true)
        let thread = Thread { [self] in watch() }
        thread.name = "assistant-interrupt-key"
        thread.start()
    }

    private func setRaw(_ raw: Bool) {
        var mode = saved
        if raw {
            mode.c_lflag &= ~tcflag_t(ISIG | ICANON | ECHO)
            withUnsafeMutableBytes(of: &mode.c_cc) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
        }
        tcsetattr(fd, TCSANOW, &mode)
    }

    private func watch() {
        defer { finished.signal() }
        var byte: UInt8 = 0
        while true {
            let s = state.withLock { $0 }
            if s.done { return }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard !s.paused, poll(&p, 1, 50) > 0 else {
                if s.paused { usleep(20_000) }
                continue
            }
            // Read only while not paused: an approval prompt owns the terminal then.
            let n = state.withLock { $0.paused } ? 0 : read(fd, &byte, 1)
            if n == 1 && byte == 0x03 { control.stop() }
        }
    }

    /// Runs `body` (an approval prompt) with the terminal in its normal mode.
    func paused<R>(_ body: () -> R) -> R {
        state.withLock { $0.paused = true }
        setRaw(false)
        defer {
            setRaw(true)
            state.withLock { $0.paused = false }
        }
        return body()
    }

    /// Stops watching and gives the terminal back as it was.
    func end() {
        state.withLock { $0.done = true }
        finished.wait()
        setRaw(false)
    }
}
