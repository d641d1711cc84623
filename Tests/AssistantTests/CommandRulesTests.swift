import AssistantCore
import Testing

/// Per-command rules for ssh_exec (issue 27 item 6): patterns on the parsed argument vector,
/// wrappers looked through, Deny first, approve only when every command of the line matches,
/// the operator's file still over the user's.
@Suite struct CommandRulesTests {
    static let operatorFile = #"{"assistant":{"tools":{"ssh_exec":{"deny":["rm *","systemctl restart *","systemctl stop *"],"approve":["systemctl status *","uptime"],"default":"ask"}}}}"#

    static func policy(_ op: String, _ user: String = "{}") throws -> AssistantPolicy {
        AssistantPolicy(operatorPart: try AssistantPolicyPart.parse(Array(op.utf8), source: "operator policy P"),
                        userPart: try AssistantPolicyPart.parse(Array(user.utf8), source: "user config U"))
    }

    static let cases: [(String, PolicyLevel, String)] = [
        ("systemctl status nginx", .approve, "assistant.tools.ssh_exec.approve 'systemctl status *'"),
        ("uptime", .approve, "approve 'uptime'"),
        ("uptime -p", .ask, "assistant.tools.ssh_exec)"),   // "uptime" matches only itself: the default
        ("systemctl restart nginx", .deny, "deny 'systemctl restart *'"),
        ("systemctl status nginx && systemctl stop nginx", .deny, "deny 'systemctl stop *'"),
        ("sudo rm -rf /", .deny, "deny 'rm *'"),                  // sudo looked through
        ("bash -c 'cd /tmp && rm x'", .deny, "deny 'rm *'"),       // and bash -c
        ("timeout 5 rm x", .deny, "deny 'rm *'"),
        ("uptime && rm x", .deny, "deny 'rm *'"),
        ("uptime && ls", .ask, "assistant.tools.ssh_exec)"),       // approve needs every command to match
        ("echo $(rm x)", .deny, "cannot be parsed"),               // cannot tell: deny
        ("ls -la", .ask, "assistant.tools.ssh_exec)"),
        // Review findings: deny sees through a path and a glob; approve through no wrapper that
        // changes what runs.
        ("/bin/rm -rf /", .deny, "deny 'rm *'"),
        ("./rm x", .deny, "deny 'rm *'"),
        ("r[m] -rf /", .deny, "holds a glob"),
        ("env LD_PRELOAD=/tmp/x.so systemctl status nginx", .ask, "assistant.tools.ssh_exec)"),
        ("sudo systemctl status nginx", .ask, "assistant.tools.ssh_exec)"),
        ("/tmp/evil/uptime", .ask, "assistant.tools.ssh_exec)"),
    ]

    @Test(arguments: cases)
    func patternsDecideOnTheParsedCommand(_ command: String, _ level: PolicyLevel, _ origin: String) throws {
        let rule = try Self.policy(Self.operatorFile).rule(for: "ssh_exec", readOnly: false, command: command)
        #expect(rule.level == level, "\(command): \(rule.origin)")
        #expect(rule.origin.contains(origin), "\(command): \(rule.origin)")
    }

    /// Deny first, whatever is more specific (as Claude Code's rules): a deny of `systemctl *`
    /// also denies `systemctl status`, which its approve pattern then cannot lift.
    @Test func denyWinsOverAMoreSpecificApprove() throws {
        let policy = try Self.policy(#"{"assistant":{"tools":{"ssh_exec":{"deny":["systemctl *"],"approve":["systemctl status *"]}}}}"#)
        #expect(policy.rule(for: "ssh_exec", readOnly: true, command: "systemctl status nginx").level == .deny)
    }

    @Test func theUsersPatternsNeverWidenTheOperators() throws {
        let user = #"{"assistant":{"tools":{"ssh_exec":{"approve":["rm *","systemctl restart *"]}}}}"#
        let policy = try Self.policy(Self.operatorFile, user)
        #expect(policy.rule(for: "ssh_exec", readOnly: false, command: "rm -rf /tmp/x").level == .deny)
        #expect(policy.rule(for: "ssh_exec", readOnly: false, command: "systemctl restart nginx").level == .deny)
        // The user may narrow: deny what the operator approves.
        let narrowing = try Self.policy(Self.operatorFile, #"{"assistant":{"tools":{"ssh_exec":{"deny":["uptime"]}}}}"#)
        #expect(narrowing.rule(for: "ssh_exec", readOnly: false, command: "uptime").level == .deny)
    }

    @Test func malformedRulesNameTheirField() {
        let bad: [(String, String)] = [
            (#"{"assistant":{"tools":{"ssh_exec":{"deny":"rm *"}}}}"#, "assistant.tools.ssh_exec.deny: expected a list of command patterns"),
            (#"{"assistant":{"tools":{"ssh_exec":{"deny":[""]}}}}"#, "assistant.tools.ssh_exec.deny: '' is not a pattern"),
            (#"{"assistant":{"tools":{"ssh_exec":{"default":"maybe"}}}}"#, "assistant.tools.ssh_exec.default: expected"),
            (#"{"assistant":{"tools":{"ssh_exec":{"allow":["ls"]}}}}"#, "unknown key 'allow' (expected deny, ask, approve, default, hosts, tags)"),
            (#"{"assistant":{"tools":{"sftp_write":{"deny":["x"]}}}}"#, "per-command rules apply to ssh_exec only"),
        ]
        for (file, message) in bad {
            #expect(throws: AssistantPolicyError.self) { _ = try AssistantPolicyPart.parse(Array(file.utf8), source: "P") }
            do { _ = try AssistantPolicyPart.parse(Array(file.utf8), source: "P") } catch {
                #expect(error.message.contains(message), "\(file): \(error.message)")
            }
        }
    }
}

/// Rules by host and by tag (issue 27 item 6): every set that applies is read together, deny
/// first; the strictest default of the host's and its tags' sets, over the tool's own; tags that
/// cannot be read deny where tag rules could decide; the operator's file still wins.
@Suite struct ScopedCommandRulesTests {
    static let operatorFile = #"""
    {"assistant":{"tools":{"ssh_exec":{"deny":["rm *"],"approve":["uptime"],"default":"ask",
      "tags":{"prod":{"deny":["systemctl *"],"default":"deny"},"web":{"default":"ask","approve":["systemctl status *"]}},
      "hosts":{"staging-1":{"approve":["systemctl restart app"],"default":"approve"}}}}}}
    """#

    func rule(_ command: String, host: String?, tags: [String]?, user: String = "{}") throws -> AssistantPolicy.Rule {
        try CommandRulesTests.policy(Self.operatorFile, user).rule(for: "ssh_exec", readOnly: false, command: command, host: host, tags: tags)
    }

    @Test func theSetsOfTheHostAndItsTagsApply() throws {
        // The tool's own rules everywhere.
        #expect(try rule("rm -rf /", host: "staging-1", tags: []).level == .deny)
        #expect(try rule("uptime", host: "db", tags: []).level == .approve)
        // A tag's deny pattern, and its default for what no pattern decides.
        let denied = try rule("systemctl status nginx", host: "db", tags: ["prod", "web"])
        #expect(denied.level == .deny && denied.origin.contains("assistant.tools.ssh_exec.tags.prod.deny 'systemctl *'"), "\(denied.origin)")
        let byDefault = try rule("ls /", host: "db", tags: ["prod"])
        #expect(byDefault.level == .deny && byDefault.origin.contains("tags.prod.default"), "\(byDefault.origin)")
        // Several tags: the strictest default.
        #expect(try rule("ls /", host: "api", tags: ["web", "prod"]).level == .deny)
        #expect(try rule("systemctl status nginx", host: "api", tags: ["web"]).level == .approve)
        // The host's own set: its approve and its default, over the tool's.
        #expect(try rule("systemctl restart app", host: "staging-1", tags: []).level == .approve)
        let hostDefault = try rule("ls /", host: "staging-1", tags: [])
        #expect(hostDefault.level == .approve && hostDefault.origin.contains("hosts.staging-1.default"), "\(hostDefault.origin)")
        // Another host gets the tool's default.
        #expect(try rule("ls /", host: "other", tags: []).level == .ask)
    }

    /// Review finding: a broad approve, or a host's own default, loosened a stricter tag.
    /// Host names and tags are synced data, so a scoped set only tightens what a looser one gives.
    @Test func aStricterDefaultOfAnotherScopeOutranksAnApprove() throws {
        // The tool's approve of `uptime` does not reach a host whose tag denies by default...
        let tagged = try rule("uptime", host: "db", tags: ["prod"])
        #expect(tagged.level == .deny && tagged.origin.contains("tags.prod.default"), "\(tagged.origin)")
        // ...or asks by default; a tag's own approve still lifts its own default.
        #expect(try rule("uptime", host: "api", tags: ["web"]).level == .ask)
        #expect(try rule("systemctl status nginx", host: "api", tags: ["web"]).level == .approve)
        // The host's approve default does not outrank a stricter default of one of its tags,
        // nor does its approve pattern.
        let hostAndTag = try rule("ls /", host: "staging-1", tags: ["prod"])
        #expect(hostAndTag.level == .deny && hostAndTag.origin.contains("tags.prod.default"), "\(hostAndTag.origin)")
        #expect(try rule("systemctl restart app", host: "staging-1", tags: ["web"]).level == .ask)
        // A caller that never read the tags fails closed where tag rules exist.
        let unread = try CommandRulesTests.policy(Self.operatorFile).rule(for: "ssh_exec", readOnly: false, command: "uptime", host: "db")
        #expect(unread.level == .deny, "\(unread.origin)")
    }

    @Test func tagsThatCannotBeReadDeny() throws {
        let unknown = try rule("uptime", host: "db", tags: nil)
        #expect(unknown.level == .deny && unknown.origin.contains("tags could not be read"), "\(unknown.origin)")
        // A policy without rules by tag needs no tags.
        let plain = try CommandRulesTests.policy(CommandRulesTests.operatorFile)
        #expect(!plain.needsTags("ssh_exec"))
        #expect(plain.rule(for: "ssh_exec", readOnly: false, command: "uptime", host: "db", tags: nil).level == .approve)
        #expect(try CommandRulesTests.policy(Self.operatorFile).needsTags("ssh_exec"))
    }

    @Test func theUserMayNarrowAHostButNotWidenIt() throws {
        let narrower = #"{"assistant":{"tools":{"ssh_exec":{"hosts":{"staging-1":{"deny":["systemctl *"]}}}}}}"#
        #expect(try rule("systemctl restart app", host: "staging-1", tags: [], user: narrower).level == .deny)
        let wider = #"{"assistant":{"tools":{"ssh_exec":{"tags":{"prod":{"approve":["systemctl restart *"],"default":"approve"}}}}}}"#
        #expect(try rule("systemctl restart app", host: "db", tags: ["prod"], user: wider).level == .deny)
    }

    @Test func malformedScopesAreRefusedNamingTheField() throws {
        for (file, field) in [
            (#"{"assistant":{"tools":{"ssh_exec":{"hosts":["db"]}}}}"#, "assistant.tools.ssh_exec.hosts"),
            (#"{"assistant":{"tools":{"ssh_exec":{"tags":{"prod":{"hosts":{}}}}}}}"#, "assistant.tools.ssh_exec.tags.prod"),
            (#"{"assistant":{"tools":{"ssh_exec":{"tags":{"prod":{"deny":["rm*"]}}}}}}"#, "assistant.tools.ssh_exec.tags.prod.deny"),
            (#"{"assistant":{"tools":{"ssh_exec":{"hosts":{"a b":{"deny":["rm *"]}}}}}}"#, "assistant.tools.ssh_exec.hosts"),
            (#"{"assistant":{"tools":{"ssh_exec":{"deny":["--force=*"]}}}}"#, "assistant.tools.ssh_exec.deny"),
        ] {
            #expect(throws: AssistantPolicyError.self, "\(file)") { _ = try AssistantPolicyPart.parse(Array(file.utf8), source: "P") }
            do { _ = try AssistantPolicyPart.parse(Array(file.utf8), source: "P") } catch {
                #expect(error.field == field, "\(file): \(error)")
            }
        }
    }
}
