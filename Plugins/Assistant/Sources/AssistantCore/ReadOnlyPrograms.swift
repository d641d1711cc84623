/// The allowlist: programs that only read, each with the options and operands that would make
/// it change state. A program missing here is never read-only. Programs a reader might expect and
/// that are refused on purpose are in `refused`, with the reason shown to the user.
public enum ReadOnlyPrograms {
    public static let rules: [String: ProgramRule] = {
        var table: [String: ProgramRule] = [:]
        // Reading files, text and the system: no option writes or runs anything.
        for name in ["cat", "head", "tail", "wc", "stat", "ls", "df", "du", "free", "uptime", "uname", "id",
                     "whoami", "groups", "ps", "pgrep", "grep", "egrep", "fgrep", "zgrep", "zcat", "cut", "tr",
                     "nl", "rev", "tac", "seq", "expr", "pwd", "cd", "basename", "dirname", "readlink",
                     "realpath", "lsblk", "findmnt", "vmstat", "iostat", "mpstat", "w", "who", "last", "lsof",
                     "netstat", "nproc", "lscpu", "lsmod", "getent", "printenv", "echo", "test", "[", "true",
                     "false", "which", "type", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
                     "sha512sum", "b2sum", "cksum", "diff", "cmp", "comm", "paste", "fold", "column",
                     "strings", "od", "hexdump", "jq", "sleep", "arch", "lsattr", "getfacl"] {
            table[name] = .free
        }
        table["find"] = ProgramRule(unsafeWords: ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls",
                                                  "-fprint", "-fprint0", "-fprintf"])
        table["rg"] = ProgramRule(unsafeShort: "z", unsafeLong: ["--pre", "--hostname-bin", "--search-zip"])
        table["sort"] = ProgramRule(unsafeShort: "o", unsafeLong: ["--output", "--compress-program"])
        table["uniq"] = ProgramRule(operands: .atMost(1))
        table["xxd"] = ProgramRule(unsafeShort: "r", unsafeLong: ["--revert"], operands: .atMost(1))
        table["tree"] = ProgramRule(unsafeShort: "oR")   // -R writes 00Tree.html into every directory
        table["base64"] = ProgramRule(unsafeShort: "o", unsafeLong: ["--output"])
        table["file"] = ProgramRule(unsafeShort: "C", unsafeLong: ["--compile"])
        table["printf"] = ProgramRule(unsafeShort: "v")
        table["date"] = ProgramRule(unsafeShort: "s", unsafeLong: ["--set"], operands: .formatOnly)
        table["hostname"] = ProgramRule(unsafeShort: "Fb", unsafeLong: ["--file", "--boot"], operands: .atMost(0))
        table["sysctl"] = ProgramRule(unsafeShort: "wpf", unsafeLong: ["--write", "--load", "--system"], operands: .noAssignment)
        table["mount"] = ProgramRule(allowedOptions: [], operands: .atMost(0))
        table["top"] = ProgramRule(requiredOptions: ["-b", "-n"])
        table["ss"] = ProgramRule(unsafeShort: "KD", unsafeLong: ["--kill", "--diag"])
        table["dmesg"] = ProgramRule(unsafeShort: "cCDEn", unsafeLong: ["--clear", "--read-clear", "--console-off",
                                                                       "--console-on", "--console-level"])
        table["journalctl"] = ProgramRule(unsafeLong: ["--rotate", "--vacuum-size", "--vacuum-time", "--vacuum-files",
                                                       "--flush", "--sync", "--relinquish-var", "--smart-relinquish-var",
                                                       "--setup-keys", "--update-catalog", "--cursor-file"])
        table["systemctl"] = systemctl
        table["ip"] = ip
        table["docker"] = containers
        table["podman"] = containers
        table["kubectl"] = kubectl
        table["git"] = git
        return table
    }()

    /// Programs that are not read-only although they may look it, with the reason.
    public static let refused: [String: String] = [
        "awk": "awk programs can run commands (system(), '| getline') and write files ('print > f'), which this classifier does not prove absent",
        "gawk": "awk programs can run commands (system(), '| getline') and write files ('print > f'), which this classifier does not prove absent",
        "mawk": "awk programs can run commands (system(), '| getline') and write files ('print > f'), which this classifier does not prove absent",
        "tee": "tee writes its input to files",
        "dd": "dd writes to its output file",
        "curl": "curl has network side effects and writes files (-o)",
        "wget": "wget has network side effects and writes files",
        "xargs": "xargs runs a command built from its input, which is not in the command text",
        "nohup": "nohup writes nohup.out and keeps the command running after the session",
        "less": "a pager can run shell commands", "more": "a pager can run shell commands",
        "watch": "watch runs its command through a shell, repeatedly",
        "time": "'time' is a shell keyword in some shells and a program that writes files (-o) in others",
    ]

    static let systemctlOptions = ["--no-pager", "--user", "--system", "-a", "--all", "-l", "--full", "--plain",
                                   "--no-legend", "--value", "-q", "--quiet", "--failed", "-t=", "--type=", "--state=",
                                   "-p=", "--property=", "-n=", "--lines=", "-o=", "--output="]
    static let systemctl = ProgramRule(
        subcommands: Dictionary(uniqueKeysWithValues: ["status", "show", "cat", "is-active", "is-enabled", "is-failed",
                                                       "list-units", "list-unit-files", "list-timers", "list-sockets",
                                                       "list-dependencies"].map { ($0, ProgramRule.free) }),
        globalOptions: systemctlOptions)

    /// ip matches abbreviations in its own order: `ip link s` is `set`, so `s` is not here.
    static let ipShow = ProgramRule(subcommands: Dictionary(uniqueKeysWithValues: ["show", "list", "lst", "sh"]
        .map { ($0, ProgramRule.free) }))
    static let ip = ProgramRule(
        subcommands: Dictionary(uniqueKeysWithValues: ["a", "addr", "address", "l", "link", "r", "ro", "route", "n", "neigh",
                                                       "neighbor", "neighbour", "ru", "rule"].map { ($0, ipShow) }),
        globalOptions: ["-4", "-6", "-s", "-stats", "-d", "-details", "-br", "-brief", "-c", "-color", "-j", "-json",
                        "-p", "-pretty", "-o", "-oneline", "-h", "-human"],
        familyGroups: ["a", "addr", "address", "l", "link", "r", "ro", "route", "n", "neigh", "neighbor", "neighbour",
                       "ru", "rule"])

    static let containerReads: [String: ProgramRule] = [
        "ps": .free, "ls": .free, "list": .free, "inspect": .free, "logs": .free, "top": .free, "port": .free,
        "stats": ProgramRule(requiredOptions: ["--no-stream"]),
    ]
    static let containers = ProgramRule(
        subcommands: [
            "ps": .free, "images": .free, "logs": .free, "inspect": .free, "version": .free, "info": .free,
            "top": .free, "port": .free, "stats": ProgramRule(requiredOptions: ["--no-stream"]),
            "container": ProgramRule(subcommands: containerReads),
            "image": ProgramRule(subcommands: ["ls": .free, "list": .free, "inspect": .free, "history": .free]),
        ],
        globalOptions: ["-H=", "--host=", "--context=", "-l=", "--log-level=", "-D", "--debug"],
        familyGroups: ["container", "image", "network", "volume", "system", "compose", "builder", "buildx", "context"])

    /// A kubeconfig can name a credential plugin to run, so only the default one is read-only.
    static let kubectlRead = ProgramRule(unsafeLong: ["--kubeconfig"])
    static let kubectl = ProgramRule(
        subcommands: Dictionary(uniqueKeysWithValues: ["get", "describe", "logs", "top", "version", "api-resources",
                                                       "api-versions", "explain"].map { ($0, kubectlRead) }),
        globalOptions: ["-n=", "--namespace=", "--context=", "--cluster=", "--user=", "-A", "--all-namespaces",
                        "--request-timeout=", "-v="],
        familyGroups: ["rollout", "config", "auth", "certificate", "create"])

    /// Codex's git screen: configuration can name programs to run, so `-c` and `--config-env` are
    /// refused, and so are the options that write a file or run a diff or conversion program.
    static let gitReadOptions = ProgramRule(unsafeLong: ["--output", "--ext-diff", "--textconv", "--exec", "--paginate",
                                                         "--open-files-in-pager", "--dirty", "--broken"])
    /// Why the subcommands that look at the work tree or show commits are not read-only: the
    /// repository's own configuration (`.git/config`, writable by whoever shared or prepared the
    /// clone) names programs they run, and a command line cannot switch all of them off.
    static let gitRunsConfiguredPrograms = "runs programs the repository's own configuration can name (core.fsmonitor, "
        + "clean filters, diff.external, textconv drivers, gpg.program): not proven read-only"
    static let git = ProgramRule(
        unsafeWords: ["-c", "--config-env"],
        subcommands: [
            // Refs and objects only; `:path` operands read the index (below).
            "rev-parse": gitReadOptions, "describe": gitReadOptions,
            "branch": ProgramRule(allowedOptions: ["--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes",
                                                   "-v", "-vv", "--verbose", "--no-color", "--color"],
                                  operands: .atMost(0)),
        ],
        globalOptions: ["-C=", "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"],
        familyGroups: ["stash", "remote", "worktree", "submodule", "notes", "lfs"],
        // Reading the index alone runs core.fsmonitor too (git refreshes it on load), so ls-files
        // is refused with the work-tree readers.
        refusedSubcommands: Dictionary(uniqueKeysWithValues: ["status", "diff", "show", "log", "blame", "shortlog", "grep", "whatchanged", "ls-files"]
            .map { ($0, gitRunsConfiguredPrograms) }))
}
