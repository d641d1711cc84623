import Glibc
import Synchronization

/// Each dashboard's terminal: the alternate screen, no echo, keys one at a time (ISIG stays
/// on, so Ctrl-C and Ctrl-Z are still signals that the host maps to shutdown and background).
/// One per running `metrics watch`, by its scene (in the daemon several terminals watch at
/// once), each with a lock of its own: a terminal that stops reading (Ctrl-S, a stalled link)
/// holds up its own dashboard only. The table is process-wide so the feature's lifecycle can
/// reach every screen from any thread: background (Ctrl-Z) leaves the alternate screen and raw
/// mode and shows the cursor before the process stops, foreground re-enters and asks for a
/// redraw, shutdown (SIGINT, SIGTERM, SIGHUP) restores. Frames are written under the screen's
/// lock and only while "entered", so no frame lands on the restored screen: every exit path
/// leaves the terminal as it was.
enum TerminalScreen {
    final class Screen: Sendable {
        private struct State {
            let input: Int32, output: Int32
            var saved: termios
            /// In the alternate screen and raw mode now (false while in background).
            var entered = false
            /// Set on foreground: the dashboard clears and redraws at once.
            var redraw = false
            /// Restored for good: nothing is drawn again.
            var left = false
        }
        private let state: Mutex<State>

        fileprivate init(input: Int32, output: Int32, saved: termios) {
            state = Mutex(State(input: input, output: output, saved: saved))
        }

        fileprivate func enter() { state.withLock { Screen.enter(&$0) } }

        private static func enter(_ s: inout State) {
            guard !s.left else { return }
            var raw = s.saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            raw.c_cc.6 = 1   // VMIN
            raw.c_cc.5 = 0   // VTIME
            tcsetattr(s.input, TCSANOW, &raw)
            TerminalScreen.write(s.output, "\u{1b}[?1049h\u{1b}[?25l\u{1b}[H\u{1b}[2J")
            s.entered = true
        }

        private static func restore(_ s: inout State) {
            guard s.entered else { return }
            var t = s.saved
            tcsetattr(s.input, TCSANOW, &t)
            TerminalScreen.write(s.output, "\u{1b}[?25h\u{1b}[?1049l")
            s.entered = false
        }

        fileprivate func suspend() { state.withLock { Screen.restore(&$0) } }

        /// The terminal may have changed meanwhile: the settings to restore later are read again.
        fileprivate func resume() {
            state.withLock { s in
                guard !s.entered, !s.left else { return }
                var t = termios()
                if tcgetattr(s.input, &t) == 0 { s.saved = t }
                Screen.enter(&s)
                s.redraw = true
            }
        }

        fileprivate func leave() {
            state.withLock { s in
                Screen.restore(&s)
                s.left = true
            }
        }

        fileprivate func takeRedraw() -> Bool { state.withLock { s in defer { s.redraw = false }; return s.redraw } }
        fileprivate var redrawPending: Bool { state.withLock { $0.redraw } }
        fileprivate func draw(_ text: String) { state.withLock { s in if s.entered { TerminalScreen.write(s.output, text) } } }
    }

    /// Only the table: never held while writing to a terminal.
    private static let screens = Mutex<[UInt64: Screen]>([:])
    private static func screen(_ scene: UInt64) -> Screen? { screens.withLock { $0[scene] } }
    private static var all: [Screen] { screens.withLock { Array($0.values) } }

    static func enter(scene: UInt64, input: Int32, output: Int32) {
        var t = termios()
        guard tcgetattr(input, &t) == 0 else { return }
        let s = Screen(input: input, output: output, saved: t)
        screens.withLock { $0[scene] = s }
        s.enter()
    }

    /// Background (Ctrl-Z): the shell gets its screen back while we are stopped.
    static func suspend() { all.forEach { $0.suspend() } }

    /// Foreground: back to the dashboards.
    static func resume() { all.forEach { $0.resume() } }

    /// Idempotent; safe from any thread. Nothing is drawn on that terminal after it.
    static func leave(scene: UInt64) { screens.withLock { $0.removeValue(forKey: scene) }?.leave() }

    /// Every dashboard's terminal back as it was (shutdown).
    static func leaveAll() { screens.withLock { s in defer { s = [:] }; return Array(s.values) }.forEach { $0.leave() } }

    /// Whether a redraw was asked for since the last call (foreground).
    static func takeRedraw(scene: UInt64) -> Bool { screen(scene)?.takeRedraw() ?? false }

    static func redrawPending(scene: UInt64) -> Bool { screen(scene)?.redrawPending ?? false }

    /// Writes a frame if the dashboard is on screen now (not in background, not restored).
    static func draw(scene: UInt64, _ text: String) { screen(scene)?.draw(text) }

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
