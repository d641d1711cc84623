import AssistantCore
import Foundation
import Synchronization
import TermhostSDK

/// Streams the model's answer to the terminal as it arrives, each piece written at once
/// (write(2), no buffering). Model text is untrusted: every control character is made visible
/// (VisibleText) except newlines and tabs, which an answer needs.
///
/// With TERMHOST_ASSISTANT_TIMING=1 in the environment, the first piece also writes one line to
/// standard error: the microseconds from the provider's first response byte (FirstByteClock,
/// set by the provider's onFirstByte) to that text having been written to the terminal
/// (Benchmarks/assistant-latency.sh reads it).
final class AnswerPrinter {
    let invocation: CommandInvocation
    /// `--json`: nothing is streamed; the caller prints one object at the end.
    let quiet: Bool
    let clock: FirstByteClock
    private var firstPiece = true
    private(set) var wroteText = false
    private var endsWithNewline = true
    private let timing = ProcessInfo.processInfo.environment["TERMHOST_ASSISTANT_TIMING"] == "1"

    init(invocation: CommandInvocation, quiet: Bool, clock: FirstByteClock) {
        self.invocation = invocation
        self.quiet = quiet
        self.clock = clock
    }

    static func visible(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { VisibleText.of(String($0)) }.joined(separator: "\t")
        }.joined(separator: "\n")
    }

    func text(_ piece: String) {
        guard !quiet, !piece.isEmpty else { return }
        let shown = Self.visible(piece)
        invocation.print(shown, terminator: "")
        if timing && firstPiece, let start = clock.latest {
            let elapsed = ContinuousClock.now - start
            let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            invocation.printError("termhost: timing: provider first byte to terminal \(micros) us")
        }
        firstPiece = false
        wroteText = true
        endsWithNewline = shown.hasSuffix("\n")
    }

    /// A line about a tool call, on standard error so the answer on standard output stays clean.
    func callStarted(_ call: ToolCall) {
        guard !quiet else { return }
        finishLine()
        invocation.printError("[\(VisibleText.of(call.name)) \(VisibleText.of(String(call.argumentsJSON.prefix(200))))]")
    }

    func callEnded(_ call: ToolCall, _ outcome: RunToolOutcome) {
        guard !quiet else { return }
        switch outcome {
        case .result: break
        case .error(let text): invocation.printError("[\(VisibleText.of(call.name)): \(VisibleText.of(String(text.prefix(300))))]")
        case .cancelled: invocation.printError("[\(VisibleText.of(call.name)): cancelled]")
        }
    }

    /// Ends a partly written line so what follows starts on its own.
    func finishLine() {
        if wroteText && !endsWithNewline {
            invocation.print("")
            endsWithNewline = true
        }
    }
}

/// When the provider's latest response began (ProviderOptions.onFirstByte, once per attempt).
final class FirstByteClock: Sendable {
    private let instant = Mutex<ContinuousClock.Instant?>(nil)
    var latest: ContinuousClock.Instant? { instant.withLock { $0 } }
    func mark(_ at: ContinuousClock.Instant) { instant.withLock { $0 = at } }
}
