// termhost-tool-call-bench: the cost of one tool call as the assistant makes it, step by step,
// in microseconds per call: the tool's own work called directly, the host's ToolService (schema
// check, crash bracket, the provider table), termhost.tools/1 through the host struct as a
// plugin calls it, and that call after the policy gate (policy files, the audit record written
// to SQLite). The tool is the C example's local_time (SDK/Examples/hello-c), loaded with dlopen
// from the plugin directory given. Build with -c release; see Benchmarks/tool-call.sh.
// Usage: termhost-tool-call-bench PLUGIN_DIR [ITERATIONS]
import AssistantCore
import CTermhost
import Foundation
import TermhostLoader
import TermhostRuntime
import TermhostServices

let arguments = CommandLine.arguments.dropFirst()
guard let pluginDir = arguments.first else {
    FileHandle.standardError.write(Data("usage: termhost-tool-call-bench PLUGIN_DIR [ITERATIONS]\n".utf8))
    exit(2)
}
let iterations = arguments.dropFirst().first.flatMap { Int($0) }.map { min(max($0, 100), 10_000_000) } ?? 20_000
let dir = NSTemporaryDirectory() + "termhost-tool-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: dir) }

var options = RuntimeOptions()
options.paths = .under(dir)
options.nonInteractive = true
options.logLevel = .error
options.searchPath = PluginSearchPath(entries: [.init(directory: pluginDir, origin: .environment)])
let runtime: HostRuntime
do { runtime = try HostRuntime.start(options) } catch {
    FileHandle.standardError.write(Data("termhost-tool-call-bench: \(error)\n".utf8))
    exit(1)
}
guard let tools = runtime.services.tools, let store = runtime.services.store,
      tools.catalogJSON.contains("\"local_time\"") else {
    FileHandle.standardError.write(Data("termhost-tool-call-bench: no local_time tool under \(pluginDir) (stage hello-c there)\n".utf8))
    exit(1)
}
let host = HostBridge.makeHost(pluginID: "org.termhost.bench", services: runtime.services)
let table = host.pointee.get_service(host, TERMHOST_SERVICE_TOOLS)!.assumingMemoryBound(to: termhost_host_tools_t.self)

/// The assistant's policy storage over the host's SQLite store, as the plugin's is.
struct BenchStorage: PolicyStorage {
    let store: SQLiteStore
    func put(_ collection: String, _ key: String, _ value: String) throws {
        try store.put(namespace: "org.termhost.assistant", collection: collection, key: key, value: Array(value.utf8))
    }
    func remove(_ collection: String, _ key: String) throws {}
    func list(_ collection: String) throws -> [(key: String, value: String)] { [] }
}
let gate = ToolGate(policy: try AssistantPolicyFiles.load(), judge: ClassifierJudge(), storage: BenchStorage(store: store))
let call = GateCall(runID: "bench", toolName: "local_time", toolReadOnly: true, argumentsJSON: "{}")

@inline(never) func measure(_ label: String, _ n: Int, _ body: () -> Void) -> Double {
    for _ in 0..<min(n / 10, 1_000) { body() }   // warm up
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<n { body() }
    let us = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n) / 1000
    print("  " + label.padding(toLength: 70, withPad: " ", startingAt: 0) + String(format: "%9.2f us/call", us))
    return us
}

var sink = 0
@MainActor func viaABI() {
    var request = termhost_tool_call_t()
    request.struct_size = UInt32(MemoryLayout<termhost_tool_call_t>.size)
    var err = termhost_error_t()
    "local_time".withCString { name in
        "{}".withCString { args in
            request.tool = name
            request.arguments_json = args
            request.call_id = tools.nextCallID()
            request.write_result = { _, _, size in _ = size }
            sink &+= Int(table.pointee.call(host, &request, &err))
        }
    }
}

print("One tool call (local_time of the C example), \(iterations) calls each (build with -c release)")
let direct = measure("the tool's work called directly (time, localtime_r, strftime)", iterations * 10) {
    var now = time(nil), parts = tm(), buffer = [CChar](repeating: 0, count: 64)
    localtime_r(&now, &parts)
    sink &+= strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z %Z", &parts)
}
let service = measure("ToolService.call in the host (schema, crash bracket, provider)", iterations) {
    if case .success(let r) = tools.call(tool: "local_time", argumentsJSON: "{}", callID: tools.nextCallID(), scene: 0) { sink &+= r.utf8.count }
}
let abi = measure("termhost.tools/1 call() through the host struct, as a plugin calls", iterations) { viaABI() }
let gated = measure("the policy gate (Approve, audit record to SQLite), then the ABI call", max(iterations / 10, 100)) {
    if case .run = gate.decide(call, run: GateRun(mode: .acting), prompter: nil, reviewer: nil) { viaABI() }
}
print(String(format: "  ABI over direct: +%.2f us; the gate adds %.2f us (mostly the audit row)", abi - direct, gated - abi))
print(String(format: "  ToolService over direct: +%.2f us; the C boundary adds %.2f us", service - direct, abi - service))
_ = runtime.shutdown()
if sink == 42 { print("") }   // keeps the optimizer from deleting the loops
