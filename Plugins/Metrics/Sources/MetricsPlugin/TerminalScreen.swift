import Glibc
import Synchronization

/// The dashboard's terminal: the alternate screen, no echo, keys one at a time (ISIG stays
/// on, so Ctrl-C and Ctrl-Z are still signals that the host maps to shutdown and background).
/// The saved state is process-wide so the feature's shutdown() (SIGINT, SIGTERM, SIGHUP) can
/// restore the terminal too: every exit path leaves it as it was.
enum TerminalScreen {
    private static let saved = Mutex<(fd: Int32, out: Int32, termios: termios)?>(nil)

    static func enter(input: Int32, output: Int32) {
        var t = termios()
        guard tcgetattr(input, &t) == 0 else { return }
        saved.withLock { $0 = (input, output, t) }
        var raw = t
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        raw.c_cc.6 = 1   // VMIN
        raw.c_cc.5 = 0   // VTIME
        tcsetattr(input, TCSANOW, &raw)
        write(output, "\u{1b}[?1049h\u{1b}[?25l\u{1b}[H\u{1b}[2J")
    }

    /// Idempotent; safe from any thread.
    static func leave() {
        guard let s = saved.withLock({ v -> (fd: Int32, out: Int32, termios: termios)? in defer { v = nil }; return v }) else { return }
        var t = s.termios
        tcsetattr(s.fd, TCSANOW, &t)
        write(s.out, "\u{1b}[?25h\u{1b}[?1049l")
    }

    /// Columns and rows of the terminal on fd (80x24 when it is not one).
    static func size(_ fd: Int32) -> (columns: Int, rows: Int) {
        var w = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0, w.ws_row > 0 else { return (80, 24) }
        return (Int(w.ws_col), Int(w.ws_row))
    }

    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue } else { return } }
            bytes = bytes.dropFirst(n)
        }
    }
}
