import Glibc
import Synchronization

/// Each dashboard's terminal: the alternate screen, no echo, keys one at a time (ISIG stays
/// on, so Ctrl-C and Ctrl-Z are still signals that the host maps to shutdown and background).
/// One per running `metrics watch`, by its scene (in the daemon several terminals watch at
/// once). The table is process-wide so the feature's lifecycle can reach it from any thread:
/// background (Ctrl-Z) leaves the alternate screen and raw mode and shows the cursor before
/// the process stops, foreground re-enters and asks for a redraw, shutdown (SIGINT, SIGTERM,
/// SIGHUP) restores. Frames are written under the same lock and only while "entered", so no
/// frame lands on the restored screen: every exit path leaves the terminal as it was.
enum TerminalScreen {
    private struct State {
        var input: Int32, output: Int32
        var saved: termios
        /// In the alternate screen and raw mode now (false while in background).
        var entered: Bool
        /// Set on foreground: the dashboard clears and redraws at once.
        var redraw: Bool
    }
    private static let screens = Mutex<[UInt64: State]>([:])

    static func enter(scene: UInt64, input: Int32, output: Int32) {
        var t = termios()
        guard tcgetattr(input, &t) == 0 else { return }
        screens.withLock { all in
            var s = State(input: input, output: output, saved: t, entered: false, redraw: false)
            enterLocked(&s)
            all[scene] = s
        }
    }

    private static func enterLocked(_ s: inout State) {
        var raw = s.saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        raw.c_cc.6 = 1   // VMIN
        raw.c_cc.5 = 0   // VTIME
        tcsetattr(s.input, TCSANOW, &raw)
        write(s.output, "\u{1b}[?1049h\u{1b}[?25l\u{1b}[H\u{1b}[2J")
        s.entered = true
    }

    private static func restoreLocked(_ s: inout State) {
        guard s.entered else { return }
        var t = s.saved
        tcsetattr(s.input, TCSANOW, &t)
        write(s.output, "\u{1b}[?25h\u{1b}[?1049l")
        s.entered = false
    }

    /// Background (Ctrl-Z): the shell gets its screen back while we are stopped.
    static func suspend() {
        screens.withLock { all in for key in all.keys { restoreLocked(&all[key]!) } }
    }

    /// Foreground: back to the dashboards (the terminal may have changed meanwhile: the
    /// settings to restore later are read again).
    static func resume() {
        screens.withLock { all in
            for key in all.keys where !all[key]!.entered {
                var t = termios()
                if tcgetattr(all[key]!.input, &t) == 0 { all[key]!.saved = t }
                enterLocked(&all[key]!)
                all[key]!.redraw = true
            }
        }
    }

    /// Idempotent; safe from any thread. Nothing is drawn on that terminal after it.
    static func leave(scene: UInt64) {
        screens.withLock { all in
            if all[scene] != nil { restoreLocked(&all[scene]!) }
            all[scene] = nil
        }
    }

    /// Every dashboard's terminal back as it was (shutdown).
    static func leaveAll() {
        screens.withLock { all in
            for key in all.keys { restoreLocked(&all[key]!) }
            all = [:]
        }
    }

    /// Whether a redraw was asked for since the last call (foreground).
    static func takeRedraw(scene: UInt64) -> Bool {
        screens.withLock { all in
            defer { all[scene]?.redraw = false }
            return all[scene]?.redraw ?? false
        }
    }

    static func redrawPending(scene: UInt64) -> Bool { screens.withLock { $0[scene]?.redraw ?? false } }

    /// Writes a frame if the dashboard is on screen now (not in background, not restored).
    static func draw(scene: UInt64, _ text: String) {
        screens.withLock { all in if let s = all[scene], s.entered { write(s.output, text) } }
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
