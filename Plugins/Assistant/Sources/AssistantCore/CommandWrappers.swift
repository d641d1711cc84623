/// The programs that run another command: the classifier looks through them at the command they
/// run, and the command family drops them. Only these are unwrapped; any other program that runs
/// a command is unknown, hence not read-only (a fixed unwrap list that misses one wrapper was a
/// bypass of Claude Code's rules, anthropics/claude-code#92542).
enum CommandWrappers {
    enum Inner {
        /// The wrapper runs this argv.
        case command(ArraySlice<ShellWord>)
        /// A shell runs this script (`bash -c`).
        case script(String)
        /// The wrapper alone, which only prints (`env`, `nice`, `command -v ls`).
        case nothing
        /// Where the wrapped command starts is not known (an option not listed here).
        case unknown
    }

    struct Unwrapped {
        var inner: Inner
        /// Why the whole is not read-only even if the inner command is; nil when it is as
        /// read-only as the inner command.
        var refusal: String?
    }

    static let names: Set<String> = ["sudo", "bash", "sh", "dash", "zsh", "env", "timeout", "nice", "ionice", "command", "exec"]

    /// nil when `name` is not a wrapper.
    static func unwrap(_ name: String, _ args: ArraySlice<ShellWord>) -> Unwrapped? {
        switch name {
        case "sudo":
            // The rule: `sudo -n` (run as root only if no password is needed, so nobody is
            // asked) is never read-only, whatever it runs.
            let nonInteractive = args.prefix { $0.text.hasPrefix("-") }.contains {
                $0.text == "--non-interactive" || (!$0.text.hasPrefix("--") && $0.text.dropFirst().contains("n"))
            }
            var result = options(args, wrapper: name, flags: "HPEn", values: "ugD",
                                 long: ["--set-home", "--preserve-groups", "--preserve-env", "--non-interactive"],
                                 longValues: ["--user", "--group", "--chdir"])
            if nonInteractive { result.refusal = "'sudo -n' is never read-only" }
            if case .nothing = result.inner { result.refusal = result.refusal ?? "'sudo' without a command" }
            return result
        case "bash", "sh", "dash", "zsh":
            return shell(name, args)
        case "env":
            var result = options(args, wrapper: name, flags: "i0", values: "uC", long: ["--ignore-environment", "--null"],
                                 longValues: ["--unset", "--chdir"])
            if case .command(let rest) = result.inner, let assignment = rest.first, assignment.text.contains("=") {
                let variable = assignment.text.prefix { $0 != "=" }
                result.inner = .command(rest.drop { $0.text.contains("=") })
                result.refusal = result.refusal ?? "'env \(variable)=…': an environment variable can make a program run other code (LD_PRELOAD, PAGER, GIT_EXTERNAL_DIFF)"
            }
            return result
        case "timeout":
            var result = options(args, wrapper: name, flags: "v", values: "sk", long: ["--preserve-status", "--foreground", "--verbose"],
                                 longValues: ["--signal", "--kill-after"])
            guard case .command(let rest) = result.inner else {
                return Unwrapped(inner: .unknown, refusal: result.refusal ?? "'timeout' without a duration and a command")
            }
            guard let duration = rest.first, isDuration(duration.text) else {
                return Unwrapped(inner: .unknown, refusal: result.refusal ?? "'timeout' without a duration")
            }
            result.inner = rest.count > 1 ? .command(rest.dropFirst()) : .nothing
            if case .nothing = result.inner { result.refusal = result.refusal ?? "'timeout' without a command" }
            return result
        case "nice":
            return options(args, wrapper: name, flags: "0123456789", values: "n", long: [], longValues: ["--adjustment"])
        case "ionice":
            // -p, -P and -u change the priority of processes already running: not listed, so refused.
            return options(args, wrapper: name, flags: "t", values: "cn", long: ["--ignore"], longValues: ["--class", "--classdata"])
        case "command":
            var result = options(args, wrapper: name, flags: "pvV", values: "", long: [], longValues: [])
            // `command -v ls` prints how `ls` would be found; it runs nothing.
            if args.first?.text == "-v" || args.first?.text == "-V" { result.inner = .nothing }
            return result
        case "exec":
            return options(args, wrapper: name, flags: "", values: "", long: [], longValues: [])
        default:
            return nil
        }
    }

    /// Skips the wrapper's options: single letters in `flags`, letters in `values` that take the
    /// rest of the word or the next word, and long options (`--name=value` or `--name value`).
    static func options(_ args: ArraySlice<ShellWord>, wrapper: String, flags: String, values: String,
                        long: [String], longValues: [String]) -> Unwrapped {
        var i = args.startIndex
        while i < args.endIndex {
            let word = args[i]
            if word.hasGlob { return Unwrapped(inner: .unknown, refusal: "the glob \(quoted(word.text)) in the options of '\(wrapper)'") }
            let text = word.text
            if text == "--" { i += 1; break }
            guard text.hasPrefix("-"), text.count > 1 else { break }
            if text.hasPrefix("--") {
                let name = String(text.prefix { $0 != "=" })
                if long.contains(name) { i += 1; continue }
                if longValues.contains(name) { i += text.contains("=") ? 1 : 2; continue }
                return Unwrapped(inner: .unknown, refusal: "'\(wrapper) \(name)' is not a proven option")
            }
            var takesNext = false
            for (offset, letter) in text.dropFirst().enumerated() {
                if values.contains(letter) {
                    takesNext = offset == text.count - 2   // the value is the rest of the word, else the next word
                    break
                }
                guard flags.contains(letter) else {
                    return Unwrapped(inner: .unknown, refusal: "'\(wrapper) -\(letter)' is not a proven option")
                }
            }
            i += takesNext ? 2 : 1
        }
        guard i < args.endIndex else { return Unwrapped(inner: .nothing) }
        return Unwrapped(inner: .command(args[i...]))
    }

    /// `bash -c SCRIPT [NAME [ARGS…]]`, also `-lc`, `-c -l`, `--login -c`: the script is
    /// classified as a command line of its own. A shell without `-c` reads a file or stdin.
    static func shell(_ name: String, _ args: ArraySlice<ShellWord>) -> Unwrapped {
        var sawC = false
        for word in args {
            if word.hasGlob { return Unwrapped(inner: .unknown, refusal: "the glob \(quoted(word.text)) in the arguments of '\(name)'") }
            let text = word.text
            if text == "--login" { continue }
            if text.hasPrefix("-"), text.count > 1, !text.hasPrefix("--") {
                for letter in text.dropFirst() {
                    guard letter == "c" || letter == "l" else {
                        return Unwrapped(inner: .unknown, refusal: "'\(name) -\(letter)' is not a proven option")
                    }
                    if letter == "c" { sawC = true }
                }
                continue
            }
            guard sawC, !text.hasPrefix("--") else { break }
            return Unwrapped(inner: .script(text))
        }
        return Unwrapped(inner: .unknown, refusal: "'\(name)' without '-c SCRIPT' runs a script file or reads commands from its input")
    }

    /// timeout's DURATION: a number with an optional fraction and unit (`5`, `2.5s`, `1m`).
    static func isDuration(_ text: String) -> Bool {
        var body = Substring(text)
        if let last = body.last, "smhd".contains(last) { body = body.dropLast() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard !body.isEmpty, parts.count <= 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// A piece of the command for a message, cut short so a reason stays one line.
    static func quoted(_ text: String) -> String {
        text.count <= 60 ? "'\(text)'" : "'\(text.prefix(57))…'"
    }
}
