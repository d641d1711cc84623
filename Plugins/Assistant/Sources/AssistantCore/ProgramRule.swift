/// How the arguments of one read-only program (or one of its subcommands) are screened. The
/// classifier reads these values; adding a program is adding a row to `ReadOnlyPrograms`, not code.
///
/// Options are screened wherever they appear, not only before the operands: GNU getopt permutes
/// (`sort file -o out` writes `out`), and accepts any unambiguous prefix of a long option, so
/// `--out=x` counts as `--output`. Screening words that are really option values or operands can
/// only refuse more, never prove more.
public struct ProgramRule: Sendable {
    /// What the program's operands may be.
    public enum Operands: Sendable, Equatable {
        case any
        /// At most this many operands; a later one would be written (`uniq in out`) or the
        /// program changes state when given any (`mount /dev/sdb1 /mnt`).
        case atMost(Int)
        /// Only `+FORMAT` operands: any other operand sets something (`date 0101000026`).
        case formatOnly
        /// No `name=value` operand (`sysctl vm.swappiness=10` writes the setting).
        case noAssignment
    }

    /// Letters that make a short-option cluster unsafe (`-i` of sed, `-o` of sort, as in `-no`).
    public var unsafeShort: String
    /// Long options (with their `--`) that can change state; a word that is a prefix of one counts.
    public var unsafeLong: [String]
    /// Words refused exactly as written: predicates of programs whose options are not getopt
    /// (`find -delete`), or single-dash options (`-c` of git).
    public var unsafeWords: [String]
    /// When set, every option must be one of these (git branch: listing flags only).
    public var allowedOptions: [String]?
    /// Options that must be present (`-b` and `-n` of top, `--no-stream` of docker stats); a short
    /// one is also found inside a cluster (`-bn1`).
    public var requiredOptions: [String]
    public var operands: Operands
    /// When set, the first operand must be one of these subcommands, screened by its own rule.
    public var subcommands: [String: ProgramRule]?
    /// Options accepted before the subcommand; a trailing `=` marks one whose value is the next
    /// word (`-n=` for `kubectl -n prod get pods`). Any other option there is refused, because a
    /// value mistaken for the subcommand would hide the real one.
    public var globalOptions: [String]
    /// Subcommands that name a group whose next word is the action (`docker container ls`): the
    /// command family then keeps both words.
    public var familyGroups: Set<String>
    /// Subcommands a reader might expect here that are refused on purpose, with why (`git
    /// status` runs what the repository's configuration names).
    public var refusedSubcommands: [String: String]

    public init(unsafeShort: String = "", unsafeLong: [String] = [], unsafeWords: [String] = [],
                allowedOptions: [String]? = nil, requiredOptions: [String] = [], operands: Operands = .any,
                subcommands: [String: ProgramRule]? = nil, globalOptions: [String] = [],
                familyGroups: Set<String> = [], refusedSubcommands: [String: String] = [:]) {
        self.unsafeShort = unsafeShort
        self.unsafeLong = unsafeLong
        self.unsafeWords = unsafeWords
        self.allowedOptions = allowedOptions
        self.requiredOptions = requiredOptions
        self.operands = operands
        self.subcommands = subcommands
        self.globalOptions = globalOptions
        self.familyGroups = familyGroups
        self.refusedSubcommands = refusedSubcommands
    }

    /// A program no option or operand of which can change state: its arguments may contain globs,
    /// since whatever file names the remote shell substitutes are harmless to it.
    public var acceptsGlobs: Bool {
        unsafeShort.isEmpty && unsafeLong.isEmpty && unsafeWords.isEmpty && allowedOptions == nil
            && requiredOptions.isEmpty && operands == .any && subcommands == nil
    }

    /// Any option or operand is fine.
    public static let free = ProgramRule()
}
