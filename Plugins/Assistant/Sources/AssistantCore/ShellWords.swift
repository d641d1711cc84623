/// Design: the command an `ssh_exec` call carries is run by the remote user's shell (`$SHELL -c`),
/// which may be bash, dash, zsh or fish. This tokenizer accepts only the subset of shell syntax on
/// which those shells agree and whose meaning is fully visible in the text: plain words, single
/// quotes, double quotes without expansions, backslash escapes, the operators `&& || ; |`, and the
/// harmless redirections `N>/dev/null`, `N>>/dev/null` and `N>&M`. Everything else is rejected with
/// a reason, never guessed at: an expansion (`$`, backquotes), a subshell or brace group, any other
/// redirection or here-document, a comment, background `&`, a newline, a control, format or
/// non-ASCII space character, and inputs over `maxBytes`.
///
/// The rules where shells differ are the reason for some refusals: fish ends a single-quoted string
/// at `\'` where POSIX shells do not, so a backslash inside single quotes is refused; dash parses
/// `&>` as a background `&`, so `&>` is refused; fish decodes escapes such as `\x2d` outside
/// quotes, so a backslash before a letter or digit is refused; a shell without comments would run
/// what follows `#`, so a word starting with `#` is refused. csh and tcsh are not covered: they
/// read `>&1` as a redirection to a file named 1. The tokenizer works on UTF-8 bytes: every shell
/// metacharacter is ASCII, and the remote shell treats other bytes as word characters too.

/// One word after quote removal, as the program will receive it in its argv.
public struct ShellWord: Equatable, Sendable {
    /// The word after quote removal.
    public var text: String
    /// True when the word has an unquoted glob character (`* ? [ ^`): the remote shell may replace
    /// it with file names, any of which could begin with `-` and be read as an option.
    public var hasGlob: Bool

    public init(_ text: String, hasGlob: Bool = false) {
        self.text = text
        self.hasGlob = hasGlob
    }
}

/// The operators allowed between simple commands.
public enum ShellOperator: String, Sendable {
    case and = "&&", or = "||", sequence = ";", pipe = "|"
}

/// A parsed command line: simple commands, each an argv, joined by `operators`
/// (`operators.count == commands.count - 1`).
public struct ShellScript: Equatable, Sendable {
    public var commands: [[ShellWord]]
    public var operators: [ShellOperator]
}

/// Why a command line is outside the accepted subset; `reason` is shown in approval prompts.
public struct ShellRejection: Error, Equatable, Sendable {
    public let reason: String
}

public enum ShellWords {
    /// Longer commands are refused without parsing: nothing read-only needs 8 KiB.
    public static let maxBytes = 8192

    /// Splits `command` into simple commands and their argvs, or says which construct is outside
    /// the accepted subset.
    public static func parse(_ command: String) throws(ShellRejection) -> ShellScript {
        guard command.utf8.count <= maxBytes else {
            throw ShellRejection(reason: "the command is longer than \(maxBytes) bytes")
        }
        for scalar in command.unicodeScalars where isInvisible(scalar) {
            throw ShellRejection(reason: "the command contains the character \(codePoint(scalar)) (a newline, control, format or unusual space character)")
        }
        var parser = Parser(bytes: Array(command.utf8))
        return try parser.run()
    }

    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == " " || scalar == "\t" || (0x21..<0x7F).contains(scalar.value) { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .surrogate, .unassigned, .privateUse:
            return true
        default:
            return false
        }
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

private struct Parser {
    let bytes: [UInt8]
    var index = 0
    var commands: [[ShellWord]] = []
    var operators: [ShellOperator] = []
    var words: [ShellWord] = []

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func run() throws(ShellRejection) -> ShellScript {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                index += 1
            case UInt8(ascii: "&"):
                if peek(1) == UInt8(ascii: "&") { try endCommand(.and); index += 2 }
                else if peek(1) == UInt8(ascii: ">") { throw reject("'&>' (dash reads it as a background '&')") }
                else { throw reject("a background '&'") }
            case UInt8(ascii: "|"):
                if peek(1) == UInt8(ascii: "|") { try endCommand(.or); index += 2 }
                else if peek(1) == UInt8(ascii: "&") { throw reject("'|&'") }
                else { try endCommand(.pipe); index += 1 }
            case UInt8(ascii: ";"):
                if peek(1) == UInt8(ascii: ";") || peek(1) == UInt8(ascii: "&") { throw reject("a 'case' terminator") }
                try endCommand(.sequence); index += 1
            case UInt8(ascii: ">"):
                try redirection()
            default:
                try word()
            }
        }
        if words.isEmpty {
            // A trailing ';' is valid shell ("ls;"); any other trailing operator is not.
            guard let last = operators.last, last == .sequence else { throw reject("an empty command") }
            operators.removeLast()
        } else {
            commands.append(words)
        }
        return ShellScript(commands: commands, operators: operators)
    }

    func peek(_ offset: Int) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    func reject(_ what: String) -> ShellRejection {
        ShellRejection(reason: "the command uses \(what), which is not proven read-only")
    }

    mutating func endCommand(_ op: ShellOperator) throws(ShellRejection) {
        guard !words.isEmpty else { throw ShellRejection(reason: "an empty command before '\(op.rawValue)'") }
        commands.append(words)
        operators.append(op)
        words = []
    }

    /// At `>` outside a word: only `>/dev/null`, `>>/dev/null` and `>&N` (N digits) are accepted.
    mutating func redirection() throws(ShellRejection) {
        index += 1
        if peek(0) == UInt8(ascii: "&") {
            index += 1
            let start = index
            while let b = peek(0), isDigit(b) { index += 1 }
            guard index > start, atWordEnd() else { throw reject("an output redirection '>&' to something other than a file descriptor number") }
            return
        }
        if peek(0) == UInt8(ascii: ">") { index += 1 }
        else if peek(0) == UInt8(ascii: "|") { throw reject("an output redirection '>|'") }
        while peek(0) == UInt8(ascii: " ") || peek(0) == UInt8(ascii: "\t") { index += 1 }
        let target = Array("/dev/null".utf8)
        guard index + target.count <= bytes.count, Array(bytes[index..<index + target.count]) == target else {
            throw reject("an output redirection '>' to a file")
        }
        index += target.count
        guard atWordEnd() else { throw reject("an output redirection '>' to a file") }
    }

    func atWordEnd() -> Bool {
        guard let b = peek(0) else { return true }
        return b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: ";")
            || b == UInt8(ascii: "|") || b == UInt8(ascii: "&")
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    mutating func word() throws(ShellRejection) {
        var text: [UInt8] = []
        var hasGlob = false
        var quoted = false
        let start = index
        loop: while index < bytes.count {
            let b = bytes[index]
            switch b {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "&"), UInt8(ascii: "|"), UInt8(ascii: ";"):
                break loop
            case UInt8(ascii: ">"):
                // "2>/dev/null": an all-digit unquoted word right before '>' is the descriptor.
                if !quoted, !text.isEmpty, text.allSatisfy(isDigit) {
                    try redirection()
                    return
                }
                break loop
            case UInt8(ascii: "'"):
                quoted = true
                index += 1
                while true {
                    guard let c = peek(0) else { throw reject("an unterminated single quote") }
                    index += 1
                    if c == UInt8(ascii: "'") { break }
                    if c == UInt8(ascii: "\\") { throw reject("a backslash inside single quotes (fish and POSIX shells end the string at different places)") }
                    text.append(c)
                }
            case UInt8(ascii: "\""):
                quoted = true
                index += 1
                while true {
                    guard let c = peek(0) else { throw reject("an unterminated double quote") }
                    index += 1
                    if c == UInt8(ascii: "\"") { break }
                    if c == UInt8(ascii: "$") { throw reject("'$' inside double quotes (an expansion)") }
                    if c == UInt8(ascii: "`") { throw reject("a command substitution '`'") }
                    if c == UInt8(ascii: "\\") {
                        guard let next = peek(0) else { throw reject("an unterminated double quote") }
                        if next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") || next == UInt8(ascii: "$") || next == UInt8(ascii: "`") {
                            text.append(next)
                            index += 1
                            continue
                        }
                    }
                    text.append(c)
                }
            case UInt8(ascii: "\\"):
                guard let next = peek(1) else { throw reject("a trailing backslash") }
                // fish decodes `\x2d` to '-' and `\n` to a newline where POSIX shells just drop the backslash.
                if next < 0x80, Character(Unicode.Scalar(next)).isLetter || Character(Unicode.Scalar(next)).isNumber {
                    throw reject("a backslash before a letter or digit (fish reads '\\x2d' as '-')")
                }
                quoted = true
                text.append(next)
                index += 2
            case UInt8(ascii: "$"):
                throw reject("'$' (a variable, command substitution or ANSI-C quoting)")
            case UInt8(ascii: "`"):
                throw reject("a command substitution '`'")
            case UInt8(ascii: "("), UInt8(ascii: ")"):
                throw reject("'\(Character(Unicode.Scalar(b)))' (a subshell, process substitution or function)")
            case UInt8(ascii: "{"), UInt8(ascii: "}"):
                throw reject("'\(Character(Unicode.Scalar(b)))' (a brace group or brace expansion)")
            case UInt8(ascii: "<"):
                throw reject("'<' (an input redirection, here-document or process substitution)")
            case UInt8(ascii: "#") where index == start:
                throw reject("'#' at the start of a word (a comment in some shells, a word in others)")
            case UInt8(ascii: "!") where index == start:
                throw reject("'!' at the start of a word (negation or history expansion)")
            case UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "^"):
                hasGlob = true
                text.append(b)
                index += 1
            default:
                text.append(b)
                index += 1
            }
        }
        words.append(ShellWord(String(decoding: text, as: UTF8.self), hasGlob: hasGlob))
    }
}
