import AssistantCore
import Synchronization
import Testing

@Suite struct SecretHandlesTests {
    /// The secrets service's contract in memory: put, get, remove by ID.
    final class MemoryVault: SecretVault {
        let values = Mutex([String: [UInt8]]())
        let next = Mutex(0)
        func put(_ value: [UInt8]) throws -> String {
            let id = next.withLock { $0 += 1; return "id\($0)" }
            values.withLock { $0[id] = value }
            return id
        }
        func get(_ id: String) throws -> [UInt8]? { values.withLock { $0[id] } }
        func remove(_ id: String) throws { _ = values.withLock { $0.removeValue(forKey: id) } }
        var count: Int { values.withLock { $0.count } }
    }

    let vault = MemoryVault()
    let binding = SecretHandles.Binding(runID: "r1", tool: "ssh_exec", host: "db-1", purpose: "sudo password on db-1")
    static let password = "pa\"ss\\word"

    @Test func aHandleStandsForTheValueUntilTheToolRunsThenWorksNoMore() throws {
        let handles = SecretHandles(vault: vault)
        let handle = try handles.issue(Array(Self.password.utf8), for: binding)
        #expect(handle.hasPrefix("secret:") && handle.count == 39 && !handle.contains(Self.password))
        let arguments = #"{"host":"db-1","command":"echo '"# + handle + #"' | sudo -S systemctl restart postgresql"}"#
        let forTool = try handles.substitute(in: arguments, runID: "r1", tool: "ssh_exec", host: "db-1")
        #expect(forTool == #"{"host":"db-1","command":"echo 'pa\"ss\\word' | sudo -S systemctl restart postgresql"}"#)
        #expect(vault.count == 0)
        #expect(handles.revealedValues == [Self.password])
        #expect(throws: SecretHandles.HandleError.refused("secret handle \(handle) is unknown or was already used; ask the user again")) {
            try handles.substitute(in: arguments, runID: "r1", tool: "ssh_exec", host: "db-1")
        }
    }

    @Test func aHandleIsRefusedForAnotherRunToolOrHostAndIsSpentAnyway() throws {
        let handles = SecretHandles(vault: vault)
        for (run, tool, host) in [("r2", "ssh_exec", "db-1"), ("r1", "sftp_write", "db-1"), ("r1", "ssh_exec", "web-2")] {
            let handle = try handles.issue(Array("v".utf8), for: binding)
            do {
                _ = try handles.substitute(in: "{\"a\":\"\(handle)\"}", runID: run, tool: tool, host: host)
                Issue.record("substituted for \(run) \(tool) \(host)")
            } catch {
                #expect(error.description.contains("was given for ssh_exec on db-1 (sudo password on db-1)"))
                #expect(!error.description.contains("\"v\""))
            }
            #expect(throws: SecretHandles.HandleError.self) {
                try handles.substitute(in: "{\"a\":\"\(handle)\"}", runID: "r1", tool: "ssh_exec", host: "db-1")
            }
        }
        #expect(vault.count == 0)
    }

    @Test func argumentsWithoutHandlesPassUnchanged() throws {
        let handles = SecretHandles(vault: vault)
        #expect(try handles.substitute(in: #"{"command":"echo secret:xyz"}"#, runID: "r", tool: "t", host: "h") == #"{"command":"echo secret:xyz"}"#)
    }

    @Test func theValueNeverReachesTheAuditLogOrThePromptOnlyTheHandle() throws {
        let handles = SecretHandles(vault: vault)
        let handle = try handles.issue(Array(Self.password.utf8), for: binding)
        let storage = MemoryPolicyStorage()
        let gate = ToolGate(policy: AssistantPolicy(), judge: ClassifierJudge(), storage: storage)
        let person = ScriptedPrompter([.once])
        let call = GateCall.exec("echo \(handle) | sudo -S systemctl restart postgresql", host: "db-1")
        #expect(gate.decide(call, run: GateRun(mode: .acting), prompter: person, reviewer: nil) == .run(by: .person))
        _ = try handles.substitute(in: call.argumentsJSON, runID: "r1", tool: "ssh_exec", host: "db-1")
        #expect(storage.allText.contains(handle) && !storage.allText.contains(Self.password))
        #expect(!person.requests[0].text.contains(Self.password))
        let output = "sudo: password for \(Self.password) incorrect"
        #expect(!Redactor(knownValues: handles.revealedValues).redact(output).contains(Self.password))
    }
}
