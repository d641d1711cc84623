import CTermhost
import Glibc
import TermhostRegistry
import TermhostSDK

/// Typed actions on the loader's side (SDK/include/termhost/action.h): reading a descriptor's
/// declarations, comparing them with the manifest's, and proving each declared symbol is a
/// function the plugin's own library defines and exports.
///
/// Design: the only symbols the host ever calls are the ones a manifest declares, and only once
/// the probe has checked two things about each in the child: it is in the library's dynamic
/// export list (.dynsym, read from the checked descriptor by `ELFFile`: defined symbols only, so
/// a plugin declaring `system` does not get libc's), and dlsym resolves it in the loaded image.
/// The host process resolves the same symbols in the same checked bytes at load
/// (`ActionCheck.resolve`).
public enum ActionCheck {
    static let action: [TermhostStruct.Field<termhost_action_descriptor_t>] = [
        .init("struct_size", \.struct_size), .init("name", \.name), .init("summary", \.summary), .init("symbol", \.symbol),
        .init("params", \.params), .init("param_count", \.param_count), .init("result", \.result), .init("flags", \.flags),
        .init("thread", \.thread),
    ]
    static let param: [TermhostStruct.Field<termhost_action_param_t>] = [
        .init("struct_size", \.struct_size), .init("name", \.name), .init("type", \.type), .init("description", \.description),
    ]

    /// The descriptor's actions (ABI 1.3), copied; none when its struct_size ends before `actions`.
    static func read(_ dp: UnsafePointer<termhost_feature_descriptor_t>, feature: String,
                     who: String) throws(LoadFailure) -> [ActionDescriptor] {
        guard TermhostStruct.has(dp.pointee.struct_size, \termhost_feature_descriptor_t.actions), var a = dp.pointee.actions else { return [] }
        func str(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        var actions: [ActionDescriptor] = []
        while let d = a.pointee {
            let at = "\(who): feature '\(feature)': action \(actions.count)"
            if let problem = TermhostStruct.problem("termhost_action_descriptor_t", structSize: d.pointee.struct_size, fields: action) {
                throw .probeFailed("\(at): \(problem)")
            }
            let name = str(d.pointee.name)
            guard let result = ActionDescriptor.ValueType(code: d.pointee.result) else {
                throw .probeFailed("\(at) ('\(VisibleText.of(name))'): result type \(d.pointee.result) is not a TERMHOST_ACTION_* type")
            }
            let count = Int(d.pointee.param_count)
            guard count <= ActionDescriptor.maxParams, count == 0 || d.pointee.params != nil else {
                throw .probeFailed("\(at) ('\(VisibleText.of(name))'): param_count \(count) with \(d.pointee.params == nil ? "no params" : "more than \(ActionDescriptor.maxParams)")")
            }
            var params: [ActionDescriptor.Param] = []
            for i in 0..<count {
                let p = d.pointee.params! + i
                if let problem = TermhostStruct.problem("termhost_action_param_t", structSize: p.pointee.struct_size, fields: param) {
                    throw .probeFailed("\(at) ('\(VisibleText.of(name))'): parameter \(i): \(problem)")
                }
                guard let type = ActionDescriptor.ValueType(code: p.pointee.type) else {
                    throw .probeFailed("\(at) ('\(VisibleText.of(name))'): parameter \(i): type \(p.pointee.type) is not a TERMHOST_ACTION_* type")
                }
                params.append(.init(name: str(p.pointee.name), type: type, description: str(p.pointee.description)))
            }
            guard d.pointee.thread <= TERMHOST_ACTION_ANY_THREAD else {
                throw .probeFailed("\(at) ('\(VisibleText.of(name))'): thread \(d.pointee.thread) is neither TERMHOST_ACTION_MAIN_THREAD nor _ANY_THREAD")
            }
            actions.append(ActionDescriptor(
                name: name, summary: str(d.pointee.summary), symbol: str(d.pointee.symbol), params: params, result: result,
                readOnly: d.pointee.flags & TERMHOST_ACTION_READ_ONLY != 0,
                thread: d.pointee.thread == TERMHOST_ACTION_MAIN_THREAD ? .main : .any,
                takesError: d.pointee.flags & TERMHOST_ACTION_TAKES_ERROR != 0))
            a += 1
        }
        return actions
    }

    /// The first difference between the manifest's actions of a feature and the library's.
    static func mismatch(_ manifest: [ActionDescriptor], _ library: [ActionDescriptor], feature: String) -> LoadFailure? {
        let list: ([String]) -> String = { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") }
        if manifest.map(\.name) != library.map(\.name) {
            return .entryMismatch(field: "actions of feature \(feature)", manifest: list(manifest.map(\.name)), library: list(library.map(\.name)))
        }
        guard let changed = zip(manifest, library).first(where: { $0 != $1 }) else { return nil }
        return .entryMismatch(field: "declaration of action '\(changed.0.name)' of feature \(feature)",
                              manifest: signature(changed.0), library: signature(changed.1))
    }

    /// `demo_add(int32 a, int32 b) -> int32, read-only, any thread` (one line, both sides of a mismatch).
    public static func signature(_ a: ActionDescriptor) -> String {
        "\(a.symbol)(" + (a.params.map { "\($0.type.rawValue) \($0.name)" } + (a.takesError ? ["error"] : [])).joined(separator: ", ")
            + ") -> \(a.result.rawValue), \(a.readOnly ? "read-only" : "state-changing"), \(a.thread == .main ? "main thread" : "any thread")"
    }

    /// In the probe child: why the library's declared actions cannot be called, naming the
    /// feature and action, or nil. `fd` is the checked library, already loaded.
    public static func problem(features: [FeatureDescriptor], fd: Int32) -> String? {
        let declared = features.flatMap { f in f.actions.map { (f, $0) } }
        guard !declared.isEmpty else { return nil }
        let exported: Set<String>
        do { exported = Set(try ELFFile(fd: fd).exportedSymbols) } catch { return "its dynamic symbols cannot be read: \(error)" }
        for (f, a) in declared {
            let at = "feature '\(f.id)': action '\(VisibleText.of(a.name))'"
            if let problem = a.problem { return "\(at): \(problem)" }
            if f.scope != .process { return "\(at): actions are honoured for process-scope features only, and this one is \(f.scope)" }
            if f.actions.filter({ $0.name == a.name }).count > 1 { return "\(at) is declared twice" }
            guard exported.contains(a.symbol) else {
                return "\(at): symbol '\(a.symbol)' is not in the library's export list (add it to the version script's global: list)"
            }
            guard resolve(a.symbol, fd: fd) != nil else {
                return "\(at): symbol '\(a.symbol)' is exported but dlsym cannot find it"
            }
        }
        return nil
    }

    /// The address of `symbol` in the library loaded from `fd` (dlopen NOLOAD finds that image
    /// by the file's device and inode). The export-list check is what proves the library itself
    /// defines it: .dynsym lists only defined symbols, and dlsym on a library's handle looks in
    /// the library before its dependencies.
    public static func resolve(_ symbol: String, fd: Int32) -> UnsafeMutableRawPointer? {
        // (The NOLOAD reference is not released: images are never closed, see PluginEntry.)
        guard let handle = dlopen("/proc/self/fd/\(fd)", RTLD_NOW | RTLD_NOLOAD) else { return nil }
        return dlsym(handle, symbol)
    }
}
