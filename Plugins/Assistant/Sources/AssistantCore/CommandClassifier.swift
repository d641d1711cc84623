/// Design: an `ssh_exec` command counts as read-only only when this classifier proves it, by
/// parsing it, never by matching patterns on the string (research: Codex's
/// `is_known_safe_command`, and the Claude Code deny-rule bypasses it avoids). A proof is:
/// the command line is in the subset `ShellWords` accepts; every simple command in it, after
/// unwrapping the wrappers `CommandWrappers` knows, runs a program of `ReadOnlyPrograms` whose
/// rule accepts its arguments. Anything else, including anything this code does not understand,
/// is "may change state", with the reason naming the part that was not proven.
public enum CommandClassifier {
    public enum Verdict: Equatable, Sendable {
        case readOnly
        /// `reason` names the part not proven read-only, for the approval prompt and the audit log.
        case mayChangeState(reason: String)
    }

    /// Wrappers and nested `bash -c` deeper than this are refused rather than followed.
    public static let maxDepth = 6

    public static func classify(_ command: String) -> Verdict {
        if let reason = unprovenPart(of: command) { return .mayChangeState(reason: reason) }
        return .readOnly
    }

    /// nil when `command` is proven read-only, else the part that was not proven (the reason of
    /// `.mayChangeState`).
    public static func unprovenPart(of command: String) -> String? {
        unprovenPart(command, depth: 0)
    }

    static func unprovenPart(_ command: String, depth: Int) -> String? {
        let script: ShellScript
        do { script = try ShellWords.parse(command) } catch { return error.reason }
        for argv in script.commands {
            if let reason = unprovenPart(argv: argv[...], depth: depth) { return reason }
        }
        return nil
    }

    static func unprovenPart(argv: ArraySlice<ShellWord>, depth: Int) -> String? {
        guard depth <= maxDepth else { return "wrappers nested more than \(maxDepth) deep" }
        guard let program = argv.first else { return "an empty command" }
        let name = program.text
        if let reason = programNameProblem(program) { return reason }
        if let unwrapped = CommandWrappers.unwrap(name, argv.dropFirst()) {
            if let refusal = unwrapped.refusal { return refusal }
            switch unwrapped.inner {
            case .command(let inner): return unprovenPart(argv: inner, depth: depth + 1)
            case .script(let script): return unprovenPart(script, depth: depth + 1)
            case .nothing: return nil
            case .unknown: return "the command '\(name)' runs is not known"
            }
        }
        if let reason = ReadOnlyPrograms.refused[name] { return "'\(name)': \(reason)" }
        if name == "sed" { return SedScreen.unprovenPart(argv.dropFirst()) }
        guard let rule = ReadOnlyPrograms.rules[name] else {
            return "\(CommandWrappers.quoted(name)) is not a known read-only program"
        }
        return screen(argv.dropFirst(), rule: rule, path: name)
    }

    /// The program word must name a program found through PATH, exactly as the remote shell sees it.
    static func programNameProblem(_ program: ShellWord) -> String? {
        let name = program.text
        if program.hasGlob && name != "[" { return "the glob \(CommandWrappers.quoted(name)) in place of the program" }
        if name.contains("=") {
            return "the variable assignment '\(name.prefix { $0 != "=" })=…' before the program (it can change what the program runs)"
        }
        if name.contains("/") { return "the program is given by path (\(CommandWrappers.quoted(name))); only known programs found through PATH are proven" }
        return nil
    }

    /// Screens a program's arguments against its rule; `path` is the program and subcommands so far.
    static func screen(_ args: ArraySlice<ShellWord>, rule: ProgramRule, path: String) -> String? {
        if let subcommands = rule.subcommands {
            var i = args.startIndex
            while i < args.endIndex {
                let word = args[i]
                if word.hasGlob { return globProblem(word, path) }
                guard isOption(word.text) else {
                    guard let sub = subcommands[word.text] else {
                        if let why = rule.refusedSubcommands[word.text] { return "'\(path) \(word.text)' \(why)" }
                        return "\(CommandWrappers.quoted(path + " " + word.text)) is not a read-only subcommand"
                    }
                    return screen(args[(i + 1)...], rule: sub, path: path + " " + word.text)
                }
                let name = optionName(word.text)
                if let reason = unsafeOption(word.text, rule: rule, path: path) { return reason }
                if rule.globalOptions.contains(name + "=") {
                    if !word.text.contains("=") {
                        i += 1
                        if i < args.endIndex, args[i].hasGlob { return globProblem(args[i], path) }
                    }
                } else if !rule.globalOptions.contains(name) {
                    return "the option \(CommandWrappers.quoted(word.text)) before the subcommand of '\(path)' is not proven harmless"
                }
                i += 1
            }
            return nil   // no subcommand: the program prints its status or its usage
        }
        var operands: [String] = []
        var words: Set<String> = []
        var letters: Set<Character> = []
        var endOfOptions = false
        for word in args {
            if word.hasGlob && !rule.acceptsGlobs { return globProblem(word, path) }
            let text = word.text
            if endOfOptions {
                // After `--` every word is an operand, whatever it looks like: `uniq -- a -mX`
                // writes the file -mX, `hostname -- -name` sets the name. Counted as operands;
                // screened as options too, which can only refuse more.
                operands.append(text)
                if isOption(text), let reason = unsafeOption(text, rule: rule, path: path) { return reason }
                continue
            }
            guard isOption(text) else { operands.append(text); continue }
            if text == "--" { endOfOptions = true; continue }
            if let reason = unsafeOption(text, rule: rule, path: path) { return reason }
            let name = optionName(text)
            if let allowed = rule.allowedOptions, !allowed.contains(name) {
                return "'\(path) \(name)' is not a proven read-only option"
            }
            words.insert(name)
            if !text.hasPrefix("--") { letters.formUnion(text.dropFirst()) }
        }
        for required in rule.requiredOptions {
            let present = required.hasPrefix("--") ? words.contains(required) : letters.contains(required.last!)
            if !present {
                return "'\(path)' is read-only here only with \(rule.requiredOptions.joined(separator: " "))"
            }
        }
        // `git rev-parse :path` reads the index, which runs the repository's core.fsmonitor.
        if path.hasPrefix("git "), let index = operands.first(where: { $0.hasPrefix(":") }) {
            return "'\(path)' with \(CommandWrappers.quoted(index)) reads the index, which runs the repository's core.fsmonitor: not proven read-only"
        }
        return operandProblem(operands, rule.operands, path)
    }

    static func isOption(_ text: String) -> Bool { text.hasPrefix("-") && text.count > 1 }

    /// `--name=value` → `--name`; a single-dash word is its own name.
    static func optionName(_ text: String) -> String {
        text.hasPrefix("--") ? String(text.prefix { $0 != "=" }) : text
    }

    static func unsafeOption(_ text: String, rule: ProgramRule, path: String) -> String? {
        let name = optionName(text)
        if rule.unsafeWords.contains(name) { return "'\(path) \(name)' can change state" }
        if text.hasPrefix("--") {
            if name.count > 2, let hit = rule.unsafeLong.first(where: { $0.hasPrefix(name) }) {
                return "'\(path) \(hit)' can change state"
            }
        } else if let letter = text.dropFirst().first(where: { rule.unsafeShort.contains($0) }) {
            return "'\(path) -\(letter)' can change state"
        }
        return nil
    }

    static func globProblem(_ word: ShellWord, _ path: String) -> String {
        "the glob \(CommandWrappers.quoted(word.text)) in the arguments of '\(path)' (a matching file name could be read as an option)"
    }

    static func operandProblem(_ operands: [String], _ rule: ProgramRule.Operands, _ path: String) -> String? {
        switch rule {
        case .any:
            return nil
        case .atMost(let limit):
            guard operands.count > limit else { return nil }
            return limit == 0
                ? "'\(path)' with an operand (\(CommandWrappers.quoted(operands[0]))) can change state"
                : "'\(path)' with more than \(limit) operand: the next one is a file it writes"
        case .formatOnly:
            guard let bad = operands.first(where: { !$0.hasPrefix("+") }) else { return nil }
            return "'\(path)' with the operand \(CommandWrappers.quoted(bad)) can change state (only +FORMAT is read-only)"
        case .noAssignment:
            guard let bad = operands.first(where: { $0.contains("=") }) else { return nil }
            return "'\(path)' with \(CommandWrappers.quoted(bad)) writes a setting"
        }
    }
}
