import CTermhost

/// Writes a status and message into a caller-owned `termhost_error_t` (NULL is allowed and
/// ignored). The message is truncated at a UTF-8 boundary to fit TERMHOST_MESSAGE_SIZE.
public func termhostWriteError(_ err: UnsafeMutablePointer<termhost_error_t>?, _ code: Int32, _ message: String) {
    guard let err else { return }
    err.pointee.code = code
    withUnsafeMutableBytes(of: &err.pointee.message) { buf in
        let utf8 = Array(message.utf8)
        var n = min(utf8.count, buf.count - 1)
        // Do not cut a multi-byte character in half: back off to a character start.
        while n > 0, n < utf8.count, utf8[n] & 0xC0 == 0x80 { n -= 1 }
        buf.copyBytes(from: utf8[..<n])
        buf[n] = 0
    }
}

/// Reports a failure from a service entry point: writes `code` and `message` into `err` (as
/// `termhostWriteError` does; NULL is ignored) and returns `code` as the call's status, so an
/// entry point ends with `return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no such ...")`.
public func termhostFail(_ err: UnsafeMutablePointer<termhost_error_t>?, _ code: Int, _ message: String) -> termhost_status {
    termhostWriteError(err, Int32(code), message)
    return termhost_status(code)
}

/// Reads the message a callee wrote into a `termhost_error_t`.
public func termhostErrorMessage(_ err: termhost_error_t) -> String {
    var copy = err
    return withUnsafeBytes(of: &copy.message) { buf in
        let bytes = buf.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An empty error record, ready to pass to a call.
public func termhostEmptyError() -> termhost_error_t {
    var err = termhost_error_t()
    err.code = Int32(TERMHOST_OK)
    return err
}

/// Strings and string lists that must outlive the call that made them: descriptors handed to
/// the host live as long as the plugin image, so they are allocated once and never freed.
enum Immortal {
    static func string(_ s: String) -> UnsafePointer<CChar> {
        UnsafePointer(strdup(s)!)
    }

    static func string(_ s: String?) -> UnsafePointer<CChar>? {
        s.map { string($0) }
    }

    /// A NULL-terminated array of C strings, or NULL for an empty list.
    static func list(_ items: [String]) -> UnsafePointer<UnsafePointer<CChar>?>? {
        guard !items.isEmpty else { return nil }
        let p = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: items.count + 1)
        for (i, s) in items.enumerated() { p[i] = string(s) }
        p[items.count] = nil
        return UnsafePointer(p)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The NUL-terminated UTF-8 text in a caller-owned buffer that a C call filled.
func stringFromBuffer(_ buf: [CChar]) -> String {
    String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A struct that crosses the boundary and says how large its producer built it. Structs only
/// grow at the end within a major version, so a smaller `struct_size` means an older (or lying)
/// producer whose struct ends before the newer members.
public protocol TermhostSizedStruct {
    var struct_size: UInt32 { get }
}

extension termhost_plugin_entry_t: TermhostSizedStruct {}
extension termhost_host_t: TermhostSizedStruct {}
extension termhost_feature_factory_t: TermhostSizedStruct {}
extension termhost_feature_descriptor_t: TermhostSizedStruct {}
extension termhost_command_descriptor_t: TermhostSizedStruct {}
extension termhost_feature_t: TermhostSizedStruct {}
extension termhost_scene_info_t: TermhostSizedStruct {}
extension termhost_command_invocation_t: TermhostSizedStruct {}
extension termhost_host_log_t: TermhostSizedStruct {}
extension termhost_host_config_t: TermhostSizedStruct {}
extension termhost_host_store_t: TermhostSizedStruct {}
extension termhost_host_secrets_t: TermhostSizedStruct {}
extension termhost_host_interact_t: TermhostSizedStruct {}
extension termhost_host_events_t: TermhostSizedStruct {}
extension termhost_host_commands_t: TermhostSizedStruct {}
extension termhost_ssh_transport_t: TermhostSizedStruct {}
extension termhost_sftp_transfer_t: TermhostSizedStruct {}
extension termhost_sftp_files_t: TermhostSizedStruct {}
extension termhost_metrics_snapshot_t: TermhostSizedStruct {}
extension termhost_ssh_sessions_t: TermhostSizedStruct {}
extension termhost_ssh_session_sink_t: TermhostSizedStruct {}
extension termhost_host_environment_t: TermhostSizedStruct {}

/// The Swift form of TERMHOST_HAS_FIELD (version.h): whether a struct the other side built is
/// large enough to hold a member. One rule for the host and for plugins, instead of
/// hand-written `offset(of:) + size` sums that each caller could get wrong.
public enum TermhostStruct {
    /// The byte just past `field`: the smallest struct_size that has it.
    public static func end<T, V>(of field: KeyPath<T, V>) -> Int {
        // offset(of:) is nil only for computed properties, which C structs do not import as.
        (MemoryLayout<T>.offset(of: field) ?? Int.max - MemoryLayout<V>.size) + MemoryLayout<V>.size
    }

    /// Whether a struct of `structSize` bytes has `field`.
    public static func has<T, V>(_ structSize: UInt32, _ field: KeyPath<T, V>) -> Bool {
        Int(structSize) >= end(of: field)
    }

    /// Whether `p` (NULL has no fields) has `field`, by its own struct_size. For a data member
    /// that has no "absent" value of its own (a number); pointer members use `member`.
    public static func has<T: TermhostSizedStruct, V>(_ p: UnsafePointer<T>?, _ field: KeyPath<T, V>) -> Bool {
        guard let p else { return false }
        return has(p.pointee.struct_size, field)
    }

    /// An appended pointer member of `p` (a function or a context), or nil when `p` is NULL,
    /// its struct_size ends before the member (an older producer) or the producer left it
    /// NULL: `if let openExec = TermhostStruct.member(transport, \.open_exec) { ... }`.
    /// The one check to make before reading a member added after the struct's first version.
    public static func member<T: TermhostSizedStruct, F>(_ p: UnsafePointer<T>?, _ field: KeyPath<T, F?>) -> F? {
        guard let p, has(p.pointee.struct_size, field) else { return nil }
        return p.pointer(to: field)?.pointee ?? nil
    }

    /// One member of a struct, named for messages, with the minor version that added it.
    public struct Field<T>: Sendable {
        public let name: String
        public let end: Int
        public let addedInMinor: UInt32
        public init<V>(_ name: String, _ field: KeyPath<T, V>, addedInMinor: UInt32 = 0) {
            self.name = name
            self.end = TermhostStruct.end(of: field)
            self.addedInMinor = addedInMinor
        }
    }

    /// Why a struct of `structSize` bytes cannot be used by a reader that needs every field added
    /// up to `minor`, or nil when it can: the first member it lacks, in declaration order, e.g.
    /// "termhost_feature_t is 40 bytes, too small for 'shutdown' (ABI 1.0 needs 96)".
    public static func problem<T>(_ typeName: String, structSize: UInt32, fields: [Field<T>], minor: UInt32 = 0) -> String? {
        let needed = fields.filter { $0.addedInMinor <= minor }
        guard let lacking = needed.first(where: { Int(structSize) < $0.end }) else { return nil }
        let total = needed.map(\.end).max() ?? 0
        return "\(typeName) is \(structSize) bytes, too small for '\(lacking.name)' (ABI \(TERMHOST_ABI_MAJOR).\(minor) needs \(total))"
    }
}
