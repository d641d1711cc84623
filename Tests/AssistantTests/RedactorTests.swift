import AssistantCore
import Testing

@Suite struct RedactorTests {
    static let cases: [(String, String)] = [
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nnext line",
         "[redacted]\nnext line"),
        ("head\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA (cut here", "head\n[redacted]"),
        ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
        ("key AKIAIOSFODNN7EXAMPLE in use", "key [redacted] in use"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted]"),
        ("Authorization: Bearer eyJhbGciOi.abc-def_123", "Authorization: Bearer [redacted]"),
        ("DB_PASSWORD=s3cr3t! other=1", "DB_PASSWORD=[redacted] other=1"),
        ("password: \"two words\"", "password: [redacted]"),
        ("mysql --password=hunter22 -e 'select 1'", "mysql --password=[redacted] -e 'select 1'"),
        ("{\"api_key\": \"abc123\"}", "{\"api_key\": [redacted]}"),
        ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY=[redacted]"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok", "token [redacted] ok"),
        ("slack xoxb-1234567890-abcdef", "slack [redacted]"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
         "jwt [redacted]"),
        ("Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 20G 19G 1G 95% /", "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 20G 19G 1G 95% /"),
        ("the passage was long", "the passage was long"),
        ("echo secret:0123456789abcdef0123456789abcdef | sudo -S id", "echo secret:0123456789abcdef0123456789abcdef | sudo -S id"),
        // A key's body without its header line (red team: `tail -c 300 KEYFILE`).
        ("QyNTUxOQAAACDZ0dPXYdmZ7f3lqHZ8kqVYhVQq6X4Qb6m3G1zYkqkVXwAAAJiW1iVbltYl\nWwAAAAtzc2gtZWQyNTUxOQAAACDZ0dPXYdmZ7f3lqHZ8kqVYhVQq6X4Qb6m3G1zYkqkVXw\nAAAEB1\n-----END OPENSSH PRIVATE KEY-----\n",
         "[redacted]\n-----END OPENSSH PRIVATE KEY-----\n"),
        ("blob b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ end", "blob [redacted] end"),
        ("short base64 line aGVsbG8gd29ybGQ=", "short base64 line aGVsbG8gd29ybGQ="),
    ]

    @Test(arguments: cases) func commonCredentialShapesAreBlankedOut(_ input: String, _ output: String) {
        #expect(Redactor().redact(input) == output)
    }

    @Test func theRunsOwnSecretValuesAreBlankedOutWherever() {
        let redactor = Redactor(knownValues: ["Tr0ub4dor&3", "ab"])
        #expect(redactor.redact("echo Tr0ub4dor&3|sudo -S id; xTr0ub4dor&3x ab") == "echo [redacted]|sudo -S id; x[redacted]x ab")
    }
}
