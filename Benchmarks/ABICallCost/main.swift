// termhost-bench: the cost of a call through an ABI service vtable against the direct Swift
// call it wraps, in nanoseconds per call. Build with -c release; see Benchmarks/run.sh.
import CTermhost
import Foundation
import TermhostRegistry
import TermhostRuntime
import TermhostServices

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000_000
let dir = NSTemporaryDirectory() + "termhost-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: dir) }
let services = HostServices(paths: .under(dir), policy: EffectivePolicy(), nonInteractive: true, stderrLevel: .error)
let host = HostBridge.makeHost(pluginID: "org.termhost.bench", services: services)

@inline(never) func measure(_ label: String, _ n: Int, _ body: () -> Void) -> Double {
    for _ in 0..<min(n / 10, 10_000) { body() }   // warm up
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<n { body() }
    let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
    print("  " + label.padding(toLength: 58, withPad: " ", startingAt: 0) + String(format: "%10.1f ns/call", ns))
    return ns
}

print("ABI call cost (\(iterations) iterations each, release build)")
let config = host.pointee.get_service(host, TERMHOST_SERVICE_CONFIG)!.assumingMemoryBound(to: termhost_host_config_t.self)
let feature = FeatureID(checked: "org.termhost.examples.hello-c")
var sink = 0
let lookup = measure("get_service(\"termhost.config/1\") through the host struct", iterations) {
    sink &+= host.pointee.get_service(host, TERMHOST_SERVICE_CONFIG) == nil ? 0 : 1
}
let viaABI = measure("config->is_feature_enabled() through the vtable", iterations) {
    sink &+= Int(config.pointee.is_feature_enabled(host, "org.termhost.examples.hello-c"))
}
let direct = measure("EffectivePolicy.disabledReason() called directly in Swift", iterations) {
    sink &+= services.policy.disabledReason(feature) == nil ? 1 : 0
}
print(String(format: "  vtable / direct ratio: %.2fx (overhead %.1f ns per call: C strings in, ID parsing, context lookup)", viaABI / direct, viaABI - direct))

let store = host.pointee.get_service(host, TERMHOST_SERVICE_STORE)!.assumingMemoryBound(to: termhost_host_store_t.self)
var err = termhost_error_t()
_ = store.pointee.put(host, "bench", "key", "value", 5, &err)
let n = max(iterations / 20, 1000)
let storeABI = measure("store->get() through the vtable (SQLite read)", n) {
    _ = store.pointee.get(host, "bench", "key", { _, _, size in _ = size }, nil, &err)
}
let storeDirect = measure("SQLiteStore.get() called directly in Swift", n) {
    sink &+= (try? services.store!.get(namespace: "org.termhost.bench", collection: "bench", key: "key"))??.count ?? 0
}
print(String(format: "  vtable / direct ratio: %.2fx", storeABI / storeDirect))
actionCost(iterations: iterations, sink: &sink)
if sink == 42 { print("") }   // keeps the optimizer from deleting the loops
_ = lookup
