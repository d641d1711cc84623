import CFFI
import CTermhost
import Foundation
import TermhostRegistry
import TermhostSDK

/// One typed action prepared for libffi: the call interface (`ffi_prep_cif`) built once from
/// the declaration (action.h gives the C signature it implies), then `ffi_call` per call with
/// arguments already converted and checked (`ActionArguments`).
///
/// Nothing here checks arguments: a value reaching `call` has its declared type. What it does
/// check is the result: a sink result longer than TERMHOST_ACTION_RESULT_LIMIT, a string that
/// is not UTF-8 or a JSON result that is not JSON fails the call.
public final class ActionCall: @unchecked Sendable {
    public let action: ActionDescriptor
    private let function: UnsafeMutableRawPointer
    private let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
    private let types: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    private let count: Int

    /// The outcome of a call: the result (nil for void), or a failure code and message.
    public enum Outcome: Equatable, Sendable {
        case result(ActionValue?)
        case failed(code: Int32, message: String)
    }

    public init?(_ action: ActionDescriptor, function: UnsafeMutableRawPointer) {
        self.action = action
        self.function = function
        var list: [UnsafeMutablePointer<ffi_type>] = []
        for p in action.params {
            list.append(ActionCall.ffiType(p.type))
            if p.type == .bytes { list.append(termhost_ffi_size()) }
        }
        if action.result.isSinkResult { list += [termhost_ffi_pointer(), termhost_ffi_pointer()] }
        if action.takesError { list.append(termhost_ffi_pointer()) }
        count = list.count
        types = .allocate(capacity: max(count, 1))
        for (i, t) in list.enumerated() { types[i] = t }
        let returns = action.result.isSinkResult ? termhost_ffi_void() : ActionCall.ffiType(action.result)
        guard ffi_prep_cif(cif, FFI_DEFAULT_ABI, UInt32(count), returns, types) == FFI_OK else { return nil }
    }

    deinit {
        cif.deallocate()
        types.deallocate()
    }

    /// The libffi type of a parameter or scalar result (pointer for strings, bytes and JSON).
    static func ffiType(_ t: ActionDescriptor.ValueType) -> UnsafeMutablePointer<ffi_type> {
        switch t {
        case .void: termhost_ffi_void()
        case .bool: termhost_ffi_uint8()
        case .int32: termhost_ffi_sint32()
        case .uint32: termhost_ffi_uint32()
        case .int64: termhost_ffi_sint64()
        case .uint64: termhost_ffi_uint64()
        case .double: termhost_ffi_double()
        case .string, .bytes, .json: termhost_ffi_pointer()
        }
    }

    /// Calls the function with `values` (one per declared parameter, of its type). `around`
    /// brackets the moment plugin code runs (the crash recorder's call slot).
    public func call(_ values: [ActionValue], around: (() -> Void) -> Void) -> Outcome {
        precondition(values.count == action.params.count)
        // Every C argument gets 8 bytes of its own; buffers (strings, bytes) are copied so that
        // they stay put for the call and a string is NUL-terminated.
        let slots = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 8, alignment: 8)
        let pointers = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: max(count, 1))
        var buffers: [UnsafeMutableRawPointer] = []
        defer {
            slots.deallocate()
            pointers.deallocate()
            buffers.forEach { $0.deallocate() }
        }
        var i = 0
        func put<T>(_ v: T) {
            let slot = slots + i * 8
            slot.storeBytes(of: v, as: T.self)
            pointers[i] = slot
            i += 1
        }
        func copy(_ bytes: [UInt8], terminate: Bool) -> UnsafeMutableRawPointer {
            let b = UnsafeMutableRawPointer.allocate(byteCount: bytes.count + 1, alignment: 1)
            bytes.withUnsafeBytes { b.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(b), byteCount: bytes.count) }
            if terminate { b.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self) }
            buffers.append(b)
            return b
        }
        for v in values {
            switch v {
            case .bool(let b): put(UInt8(b ? 1 : 0))
            case .int32(let n): put(n)
            case .int64(let n): put(n)
            case .uint32(let n): put(n)
            case .uint64(let n): put(n)
            case .double(let d): put(d)
            case .string(let s), .json(let s): put(copy(s, terminate: true))
            case .bytes(let s):
                put(copy(s, terminate: false))
                put(s.count)
            }
        }
        let sink = ValueSink()
        if action.result.isSinkResult {
            put(ValueSink.write)
            put(Unmanaged.passUnretained(sink).toOpaque())
        }
        let error = UnsafeMutablePointer<termhost_error_t>.allocate(capacity: 1)
        error.initialize(to: termhost_error_t())
        defer { error.deallocate() }
        if action.takesError { put(error) }

        // ffi_call widens a small integer result to a full register (ffi_arg).
        var returned: (UInt64, UInt64) = (0, 0)
        let target = unsafeBitCast(function, to: (@convention(c) () -> Void).self)
        withUnsafeMutableBytes(of: &returned) { r in
            around { ffi_call(cif, target, r.baseAddress, pointers) }
        }
        withExtendedLifetime(sink) {}

        if action.takesError, error.pointee.code != TERMHOST_OK {
            let message = termhostErrorMessage(error.pointee)
            return .failed(code: error.pointee.code, message: message.isEmpty ? "failed with code \(error.pointee.code) and no message" : message)
        }
        let raw = returned.0
        switch action.result {
        case .void: return .result(nil)
        case .bool: return .result(.bool(raw & 0xFF != 0))
        case .int32: return .result(.int32(Int32(truncatingIfNeeded: raw)))
        case .uint32: return .result(.uint32(UInt32(truncatingIfNeeded: raw)))
        case .int64: return .result(.int64(Int64(bitPattern: raw)))
        case .uint64: return .result(.uint64(raw))
        case .double: return .result(.double(Double(bitPattern: raw)))
        case .string, .bytes, .json: return sink.outcome(action.result)
        }
    }
}

/// Receives a sink result: copies the first write (action.h: "at most once"), up to the limit.
final class ValueSink: @unchecked Sendable {
    private var bytes: [UInt8]?
    private var tooLong = 0
    private let lock = NSLock()

    static let write: termhost_value_sink = { user, data, size in
        guard let user else { return }
        Unmanaged<ValueSink>.fromOpaque(user).takeUnretainedValue().take(data, size)
    }

    private func take(_ data: UnsafeRawPointer?, _ size: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard bytes == nil else { return }
        // size_t arrives as Int: a huge one is negative, and is read as nothing.
        let n = data == nil ? 0 : max(0, size)
        if n > Int(TERMHOST_ACTION_RESULT_LIMIT) { tooLong = n; bytes = []; return }
        bytes = n == 0 ? [] : Array(UnsafeRawBufferPointer(start: data, count: n))
    }

    func outcome(_ type: ActionDescriptor.ValueType) -> ActionCall.Outcome {
        lock.lock()
        defer { lock.unlock() }
        if tooLong > 0 {
            return .failed(code: Int32(TERMHOST_ERR_TOO_LARGE),
                           message: "the result was \(tooLong) bytes, more than the \(TERMHOST_ACTION_RESULT_LIMIT) the host accepts")
        }
        let got = bytes ?? []
        switch type {
        case .bytes: return .result(.bytes(got))
        case .string:
            guard String(validating: got, as: UTF8.self) != nil else {
                return .failed(code: Int32(TERMHOST_ERR_INTERNAL), message: "the string result is not UTF-8")
            }
            return .result(.string(got))
        default:
            guard let parsed = try? ActionJSON.parse(got) else {
                return .failed(code: Int32(TERMHOST_ERR_INTERNAL), message: bytes == nil ? "no JSON result was written" : "the result is not JSON")
            }
            return .result(.json(Array(parsed.text.utf8)))
        }
    }
}
