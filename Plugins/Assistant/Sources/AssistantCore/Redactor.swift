/// The second layer against secrets: text on its way to the model, the store, the audit log
/// or a log line. The first layer is structural (credentials never enter a tool's arguments or
/// results; secrets the model needs travel as `SecretHandles`), so this catches what a remote
/// program printed: the run's own secret values wherever they appear, and the common shapes of
/// credentials.
///
/// Shapes: PEM private key blocks (to their END line, or to the end of the text when it was cut),
/// key bodies without their header (runs of base64 lines; OpenSSH's key magic),
/// AWS access key IDs (AKIA…, ASIA…), `aws_secret_access_key = …`, `Bearer …` tokens, and
/// assignments of `password`, `passwd`, `pwd`, `secret`, `token`, `api_key`/`apikey` with `=` or
/// `:` (the name stays, the value goes), OpenAI `sk-…`, GitHub `ghp_…`/`github_pat_…`, Slack
/// `xox?-…` tokens, and JWTs.
public struct Redactor: Sendable {
    /// Secret values of the run (given by the user through handles), replaced wherever they
    /// appear. Values shorter than `minimumKnownLength` are not searched for: a two-letter value
    /// would blank out ordinary words, and such a value is no secret anyway.
    public var knownValues: [String]
    public static let minimumKnownLength = 3
    public static let marker = "[redacted]"

    public init(knownValues: [String] = []) { self.knownValues = knownValues }

    public func redact(_ text: String) -> String {
        var out = text
        for value in knownValues.filter({ $0.count >= Self.minimumKnownLength }).sorted(by: { $0.count > $1.count }) {
            out = out.replacing(value, with: Self.marker)
        }
        let lower = out.lowercased()
        for shape in Self.shapes where shape.hints.isEmpty || shape.hints.contains(where: { lower.contains($0) }) {
            guard let regex = try? Regex(shape.pattern) else { continue }
            out = out.replacing(regex) { match in
                let keep = shape.keepsGroup ? (match.output[1].substring.map(String.init) ?? "") : ""
                return keep + Self.marker
            }
        }
        return out
    }

    /// A credential shape: the pattern, lowercase words one of which must occur for the pattern
    /// to be tried (most output has none, and then no regex runs; none listed: always tried),
    /// and whether group 1 is kept.
    struct Shape {
        var pattern: String
        var hints: [String]
        var keepsGroup = false
    }

    static let shapes: [Shape] = [
        Shape(pattern: #"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*)"#,
              hints: ["private key"]),
        // A key's body without its header line (`tail -c 300 id_ed25519` cuts it off): two or more
        // lines of 60 to 76 base64 characters, as PEM and OpenSSH write keys. Other base64 of that
        // shape goes too, which costs the model nothing it needs.
        Shape(pattern: #"(?m)(?:^[A-Za-z0-9+/]{60,76}={0,2}\r?$\n?){2,}(?:^[A-Za-z0-9+/]{1,76}={0,2}\r?$)?"#, hints: []),
        // OpenSSH's private key magic ("openssh-key-v1" in base64) anywhere.
        Shape(pattern: #"[A-Za-z0-9+/]*b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]*"#, hints: ["b3blbnnzac1rzxktdje"]),
        Shape(pattern: #"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"#,
              hints: ["akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"]),
        Shape(pattern: #"(?i)(aws_secret_access_key\s*[=:]\s*)\S+"#, hints: ["aws_secret"], keepsGroup: true),
        Shape(pattern: #"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]+=*"#, hints: ["bearer"], keepsGroup: true),
        // No word boundary before the name: DB_PASSWORD= counts. A handle (`secret:` and 32 hex
        // digits) is no secret and stays readable in the audit log.
        Shape(pattern: #"(?i)((?:password|passwd|pwd|secret|token|api[_-]?key)["']?\s*[=:]\s*)(?![0-9a-f]{32}\b)(?:"[^"\n]*"|'[^'\n]*'|[^\s,;&]+)"#,
              hints: ["pass", "pwd", "secret", "token", "api"], keepsGroup: true),
        Shape(pattern: #"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"#, hints: ["sk-"]),
        Shape(pattern: #"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"#, hints: ["gh", "github_pat_"]),
        Shape(pattern: #"\bxox[abprs]-[A-Za-z0-9\-]{10,}"#, hints: ["xox"]),
        Shape(pattern: #"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"#, hints: ["eyj"]),
    ]
}
