import Glibc

/// Asks the user things through a scene's terminal. Fails closed: no terminal for the scene,
/// scene 0 (background work) or `--non-interactive` gives `.nonInteractive`, never a default
/// answer. Prompts go to the terminal's output (stderr for the CLI, as ssh does) and answers
/// are read a byte at a time from its input, so nothing beyond the line is consumed.
public final class Interaction: @unchecked Sendable {
    public struct Terminal: Sendable {
        public let input: Int32
        public let output: Int32
        public init(input: Int32, output: Int32) {
            self.input = input
            self.output = output
        }
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case nonInteractive(String)
        case cancelled
        case tooLong

        public var description: String {
            switch self {
            case .nonInteractive(let why): why
            case .cancelled: "the prompt was cancelled (end of input)"
            case .tooLong: "the answer is too long"
            }
        }
    }

    public let nonInteractive: Bool
    private let lock = RecursiveLock()
    /// The terminal settings to put back if the process is ended while a secret prompt has
    /// echo off (see `restoreTerminal`).
    private let echoState = RecursiveLock()
    /// Per terminal: in the daemon, prompts of several scenes (each on its own client's
    /// terminal) may have echo off at once.
    nonisolated(unsafe) private var echoOff: [Int32: termios] = [:]
    /// Whether a scene's command was asked to stop (termhost.cancel/1): a prompt waiting for an
    /// answer gives up then, with its terminal restored, instead of reading on (in the daemon
    /// the terminal is a client's, which may be gone). Set by the host's services.
    nonisolated(unsafe) public var isCancelled: @Sendable (UInt64) -> Bool = { _ in false }
    private var terminals: [UInt64: Terminal] = [:]
    /// One prompt per scene at a time.
    private var promptLocks: [UInt64: RecursiveLock] = [:]

    public init(nonInteractive: Bool) { self.nonInteractive = nonInteractive }

    public func attach(scene: UInt64, terminal: Terminal?) {
        lock.withLock { terminals[scene] = terminal }
    }

    /// Forgets the scene's terminal: a later prompt for it fails closed, as for a scene that
    /// never had one.
    public func detach(scene: UInt64) {
        lock.withLock {
            terminals[scene] = nil
            promptLocks[scene] = nil
        }
    }

    public func hasTerminal(_ scene: UInt64) -> Bool {
        !nonInteractive && lock.withLock { terminals[scene] != nil }
    }

    private func terminal(_ scene: UInt64, _ what: String) throws(Failure) -> (Terminal, RecursiveLock) {
        if nonInteractive { throw .nonInteractive("cannot ask '\(what)': termhost runs with --non-interactive") }
        guard scene != 0 else { throw .nonInteractive("cannot ask '\(what)': background work has no terminal to ask on") }
        guard let pair = lock.withLock({ () -> (Terminal, RecursiveLock)? in
            guard let t = terminals[scene] else { return nil }
            let l = promptLocks[scene] ?? RecursiveLock()
            promptLocks[scene] = l
            return (t, l)
        }) else { throw .nonInteractive("cannot ask '\(what)': scene \(scene) has no terminal") }
        return pair
    }

    public func promptText(scene: UInt64, prompt: String, echo: Bool) throws(Failure) -> String {
        let (t, promptLock) = try terminal(scene, prompt)
        return try promptLock.withLock { () throws(Failure) -> String in
            write(t.output, prompt)
            var saved = termios()
            let isTTY = isatty(t.input) == 1 && tcgetattr(t.input, &saved) == 0
            if !echo && isTTY {
                var quiet = saved
                quiet.c_lflag &= ~tcflag_t(ECHO)
                echoState.withLock { echoOff[t.input] = saved }
                tcsetattr(t.input, TCSAFLUSH, &quiet)
            }
            defer {
                if !echo && isTTY {
                    restoreTerminal(t.input)
                    write(t.output, "\n")
                }
            }
            return try readLine(t.input, scene: scene)
        }
    }

    public func confirm(scene: UInt64, question: String) throws(Failure) -> Bool {
        let (t, promptLock) = try terminal(scene, question)
        return try promptLock.withLock { () throws(Failure) -> Bool in
            while true {
                write(t.output, question + " (yes/no) ")
                switch try readLine(t.input, scene: scene).lowercased().trimmingSpaces {
                case "yes", "y": return true
                case "no", "n": return false
                default: write(t.output, "Please type 'yes' or 'no'.\n")
                }
            }
        }
    }

    public func choose(scene: UInt64, prompt: String, choices: [String]) throws(Failure) -> Int {
        let (t, promptLock) = try terminal(scene, prompt)
        return try promptLock.withLock { () throws(Failure) -> Int in
            while true {
                write(t.output, prompt + "\n")
                for (i, c) in choices.enumerated() { write(t.output, "  \(i + 1)) \(c)\n") }
                write(t.output, "Choose 1-\(choices.count): ")
                if let n = Int(try readLine(t.input, scene: scene).trimmingSpaces), (1...choices.count).contains(n) { return n - 1 }
            }
        }
    }

    /// Turns echo back on where a secret prompt turned it off (every terminal, or only `fd`);
    /// the CLI calls this before it exits on a signal. Idempotent.
    public func restoreTerminal(_ fd: Int32? = nil) {
        echoState.withLock {
            for (descriptor, saved) in echoOff where fd == nil || descriptor == fd {
                var state = saved
                tcsetattr(descriptor, TCSAFLUSH, &state)
                echoOff[descriptor] = nil
            }
        }
    }

    /// A notice on the scene's terminal; false when there is none (the caller logs it instead).
    public func notify(scene: UInt64, _ message: String) -> Bool {
        guard let t = lock.withLock({ terminals[scene] }) else { return false }
        write(t.output, message + "\n")
        return true
    }

    private func readLine(_ fd: Int32, scene: UInt64) throws(Failure) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            // Waits in slices, so a cancelled command's prompt ends within 0.1 s.
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, 100)
            if isCancelled(scene) { throw .cancelled }
            if polled == 0 || (polled < 0 && errno == EINTR) { continue }
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { throw .cancelled }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
            if bytes.count > 65_536 { throw .tooLong }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func write(_ fd: Int32, _ text: String) {
        let b = Array(text.utf8)
        _ = b.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }
}

extension String {
    var trimmingSpaces: String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
