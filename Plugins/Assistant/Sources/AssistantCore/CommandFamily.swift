/// The normalized command family that remembered approvals are keyed by (research section 0,
/// item 4: keying on the raw string re-prompts for every new argument; a substring or prefix
/// match lets `git status && git push` ride on an approval of `git status`).
///
/// A family is the program plus its subcommand, arguments dropped: `systemctl restart nginx` and
/// `systemctl restart sshd` are both "systemctl restart", and `docker container rm` keeps both
/// words because `container` is a group. The wrappers `timeout`, `nice`, `ionice`, `env`,
/// `command`, `exec` and `bash -c` are dropped; `sudo` is kept as a prefix, because approving a
/// command is not approving it as root. Interpreters and programs whose arguments run or write
/// something (`exactOnly`) have the whole command as their family. A command line of several commands has the families of its
/// parts joined by their operators, so it is approved only as that whole shape.
public enum CommandFamily {
    /// nil when the command is outside what `ShellWords` parses, or when a part's program cannot
    /// be told (an assignment or glob in its place, a wrapper option not known).
    public static func of(_ command: String) -> String? {
        of(command, depth: 0)
    }

    static func of(_ command: String, depth: Int) -> String? {
        guard let script = try? ShellWords.parse(command) else { return nil }
        var family = ""
        for (index, argv) in script.commands.enumerated() {
            guard let part = of(argv: argv[...], depth: depth) else { return nil }
            if index > 0 { family += " " + script.operators[index - 1].rawValue + " " }
            family += part
        }
        return family
    }

    static func of(argv: ArraySlice<ShellWord>, depth: Int) -> String? {
        guard depth <= CommandClassifier.maxDepth, let program = argv.first else { return nil }
        let name = program.text
        if program.hasGlob && name != "[" || name.contains("=") { return nil }
        if let unwrapped = CommandWrappers.unwrap(name, argv.dropFirst()) {
            // An assignment can change what the program runs (LD_PRELOAD): not the same family.
            if name == "env", unwrapped.refusal != nil { return nil }
            let prefix = name == "sudo" ? "sudo " : ""
            switch unwrapped.inner {
            case .command(let inner): return of(argv: inner, depth: depth + 1).map { prefix + $0 }
            case .script(let script): return of(script, depth: depth + 1).map { prefix + $0 }
            case .nothing: return name
            case .unknown: return nil
            }
        }
        if exactOnly.contains(name) { return exact(argv) }
        let args = argv.dropFirst()
        let known = ReadOnlyPrograms.rules[name]
        if let known, known.subcommands == nil { return name }   // a listed program without subcommands
        guard let rule = known else {
            guard let first = args.first(where: { !CommandClassifier.isOption($0.text) }), isSubcommandLike(first) else { return name }
            return name + " " + first.text
        }
        // Skip the global options the table knows, so `kubectl -n prod delete` is "kubectl delete".
        var words: [String] = [name]
        var i = args.startIndex
        while i < args.endIndex, words.count < 3 {
            let text = args[i].text
            if CommandClassifier.isOption(text) {
                if words.count > 1 { break }
                let name = CommandClassifier.optionName(text)
                if rule.globalOptions.contains(name + "=") {
                    if !text.contains("=") { i += 1 }
                } else if !rule.globalOptions.contains(name) {
                    return nil   // where the subcommand starts is not known
                }
            } else {
                guard isSubcommandLike(args[i]) else { break }
                words.append(text)
                if words.count == 2 && !rule.familyGroups.contains(text) { break }
            }
            i += 1
        }
        let family = words.joined(separator: " ")
        return exactSubcommands.contains(family) ? exact(argv) : family
    }

    /// Subcommands that run a command or code of the call's choosing (`docker run IMAGE CMD`):
    /// like `exactOnly`, their family is the exact command.
    public static let exactSubcommands: Set<String> = [
        "docker run", "docker exec", "docker container run", "docker container exec", "docker compose run",
        "docker compose exec", "podman run", "podman exec", "podman container run", "podman container exec",
        "kubectl exec", "kubectl run", "kubectl debug", "kubectl apply", "kubectl create",
    ]

    /// Programs whose arguments are code, or name what they run or write: an approval of one call
    /// must not cover the next (after "always" for `python3 -c 'print(1)'`, any Python would run;
    /// after one for a `find -name` search, `find -fprint`). Their family is the whole argument
    /// vector, so "always" covers that exact command and the prompt shows it.
    public static let exactOnly: Set<String> = [
        "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh", "Rscript", "deno", "bun",
        "sh", "bash", "zsh", "dash", "ksh", "fish", "awk", "gawk", "mawk", "sed", "find", "xargs", "env", "git", "make",
        "cmake", "npm", "npx", "yarn", "pnpm", "pip", "pip3", "gradle", "mvn", "cargo", "go", "ssh", "scp", "rsync", "dd", "tee", "tar", "curl", "wget", "install", "crontab", "at", "systemd-run", "psql",
        "mysql", "sqlite3", "redis-cli", "mongosh", "vim", "vi", "nvim", "emacs", "less", "busybox",
    ]

    /// The argument vector as one shell-quoted line: what an exact family matches. A word with
    /// an unquoted glob stays unquoted, so `find . -name '*'` and `find . -name *` (whose
    /// expansion could bring in `-delete` from a planted file name) are different families.
    static func exact(_ argv: ArraySlice<ShellWord>) -> String {
        argv.map { word in
            let text = word.text
            if word.hasGlob { return text }
            let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_@%+=:,./-".unicodeScalars.contains($0)
            }
            return plain ? text : "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }.joined(separator: " ")
    }

    /// A word that reads as a subcommand (`install`, `list-units`), not a path, file or value.
    static func isSubcommandLike(_ word: ShellWord) -> Bool {
        guard !word.hasGlob, let first = word.text.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return word.text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
