// One C function (llabs from libc: int64 in, int64 out) called three ways, in ns per call:
// through libffi as a typed action (ActionCall: ffi_call on a cif prepared once), through a
// hand-written vtable command (run_command parsing argv with strtoll, as a plugin's command
// must), and directly through its function pointer. The conversion of words to typed values
// (ActionArguments) is measured on its own, since `termhost call` pays it once per call.
import CTermhost
import Foundation
import TermhostRegistry
import TermhostRuntime

typealias Int64Function = @convention(c) (Int64) -> Int64

/// The pointer the three paths share; a global so that the C command below can reach it.
nonisolated(unsafe) let llabsPointer: UnsafeMutableRawPointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "llabs")!

@inline(never) func actionCost(iterations: Int, sink: inout Int) {
    print("Typed action call cost (llabs, \(iterations) iterations each)")
    let function = unsafeBitCast(llabsPointer, to: Int64Function.self)
    let declaration = ActionDescriptor(name: "llabs", summary: "|v|", symbol: "llabs",
                                       params: [.init(name: "v", type: .int64, description: "")], result: .int64,
                                       readOnly: true, thread: .any, takesError: false)
    let call = ActionCall(declaration, function: llabsPointer)!
    var total = 0
    let ffi = measure("llabs through libffi (ActionCall, values already typed)", iterations) {
        if case .result(.int64(let v)?) = call.call([.int64(-42)], around: { $0() }) { total &+= Int(v) }
    }
    let convert = measure("ActionArguments.fromWords([\"-42\"]) alone", iterations) {
        if let v = try? ActionArguments.fromWords([Array("-42".utf8)], for: declaration) { total &+= v.count }
    }
    var feature = termhost_feature_t()
    feature.struct_size = UInt32(MemoryLayout<termhost_feature_t>.size)
    feature.run_command = { _, inv in
        let value = strtoll(inv!.pointee.argv[0]!, nil, 10)
        return Int32(truncatingIfNeeded: unsafeBitCast(llabsPointer, to: Int64Function.self)(value))
    }
    let command = measure("llabs in a vtable command (run_command, strtoll on argv)", iterations) {
        "-42".withCString { word in
            withUnsafePointer(to: UnsafePointer(word)) { argv in
                var inv = termhost_command_invocation_t()
                inv.struct_size = UInt32(MemoryLayout<termhost_command_invocation_t>.size)
                inv.argc = 1
                inv.argv = UnsafeRawPointer(argv).assumingMemoryBound(to: UnsafePointer<CChar>?.self)
                total &+= Int(withUnsafePointer(to: feature) { f in feature.run_command!(f, &inv) })
            }
        }
    }
    let direct = measure("llabs through its function pointer (a direct C call)", iterations) {
        total &+= Int(function(-42))
    }
    print(String(format: "  libffi / direct: %.1fx; libffi / vtable command: %.1fx; with conversion: %.1f ns", ffi / direct, ffi / command, ffi + convert))
    sink &+= total
}
