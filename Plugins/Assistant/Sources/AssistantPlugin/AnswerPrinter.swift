import AssistantCore
import Foundation
import TermhostSDK

/// Streams the model's answer to the terminal as it arrives, each piece written at once
/// (write(2), no buffering). Model text is untrusted: every control character is made visible
/// (VisibleText) except newlines and tabs, which an answer needs.
///
/// With TERMHOST_ASSISTANT_TIMING=1 in the environment, the first piece also writes one line to
/// standard error: the microseconds from the provider reporting its first text to that text
/// having been written to the terminal (Benchmarks/assistant-latency.sh reads it).
final class AnswerPrinter {
    let invocation: CommandInvocation
    /// `--json`: nothing is streamed; the caller prints one object at the end.
    let quiet: Bool
    private var firstPiece = true
    private(set) var wroteText = false
    private var endsWithNewline = true
    private let timing = ProcessInfo.processInfo.environment["TERMHOST_ASSISTANT_TIMING"] == "1"

    init(invocation: CommandInvocation, quiet: Bool) {
        self.invocation = invocation
        self.quiet = quiet
    }

    static func visible(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { VisibleText.of(String($0)) }.joined(separator: "\t")
        }.joined(separator: "\n")
    }

    func text(_ piece: String) {
        guard !quiet, !piece.isEmpty else { return }
        let start = timing && firstPiece ? DispatchTime.now().uptimeNanoseconds : 0
        let shown = Self.visible(piece)
        invocation.print(shown, terminator: "")
        if timing && firstPiece {
            let micros = (DispatchTime.now().uptimeNanoseconds - start) / 1000
            invocation.printError("termhost: timing: first text to terminal \(micros) us")
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
