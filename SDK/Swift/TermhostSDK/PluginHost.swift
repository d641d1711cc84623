import CTermhost
import Glibc

/// The host as a Swift plugin sees it: typed wrappers over the service vtables in
/// `SDK/include/termhost/services/`. Every call names the C function it wraps.
public struct PluginHost: @unchecked Sendable {
    public let raw: UnsafePointer<termhost_host_t>

    public init(_ raw: UnsafePointer<termhost_host_t>) { self.raw = raw }

    /// The raw vtable for a service ID, or nil. The C function is `termhost_host_t.get_service`.
    public func service(_ id: String) -> UnsafeRawPointer? { raw.pointee.get_service(raw, id) }

    func typed<T>(_ id: String, _ type: T.Type) -> UnsafePointer<T>? {
        service(id)?.assumingMemoryBound(to: T.self)
    }

    public enum LogLevel { case debug, info, warning, error }

    /// `termhost_host_log_t.log`. Never pass secrets.
    public func log(_ level: LogLevel, _ message: String) {
        guard let log = typed(TERMHOST_SERVICE_LOG, termhost_host_log_t.self) else { return }
        let raw: termhost_log_level_t = switch level {
        case .debug: TERMHOST_LOG_DEBUG
        case .info: TERMHOST_LOG_INFO
        case .warning: TERMHOST_LOG_WARNING
        case .error: TERMHOST_LOG_ERROR
        }
        log.pointee.log(self.raw, raw, message)
    }

    /// `termhost_host_config_t.get_setting`: the effective value as JSON text, or nil if unset.
    public func setting(feature: String, key: String) throws(PluginError) -> String? {
        guard let config = typed(TERMHOST_SERVICE_CONFIG, termhost_host_config_t.self) else { return nil }
        var size = 256
        while true {
            var buf = [CChar](repeating: 0, count: size)
            var needed = 0
            var err = termhostEmptyError()
            let rc = config.pointee.get_setting(raw, feature, key, &buf, size, &needed, &err)
            switch Int(rc) {
            case TERMHOST_OK: return stringFromBuffer(buf)
            case TERMHOST_ERR_NOT_FOUND: return nil
            case TERMHOST_ERR_TOO_LARGE where needed > size: size = needed
            default: throw PluginError(termhostErrorMessage(err), code: rc)
            }
        }
    }

    public var store: Store? { typed(TERMHOST_SERVICE_STORE, termhost_host_store_t.self).map { Store(host: raw, vtable: $0) } }
    public var secrets: Secrets? { typed(TERMHOST_SERVICE_SECRETS, termhost_host_secrets_t.self).map { Secrets(host: raw, vtable: $0) } }
    public var interact: Interact? { typed(TERMHOST_SERVICE_INTERACT, termhost_host_interact_t.self).map { Interact(host: raw, vtable: $0) } }
    public var events: Events? { typed(TERMHOST_SERVICE_EVENTS, termhost_host_events_t.self).map { Events(host: raw, vtable: $0) } }
    public var commands: Commands? { typed(TERMHOST_SERVICE_COMMANDS, termhost_host_commands_t.self).map { Commands(host: raw, vtable: $0) } }
}

/// Calls a C function that reports through a `termhost_error_t`, throwing its message.
@discardableResult
func check(_ body: (UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(PluginError) -> termhost_status {
    var err = termhostEmptyError()
    let rc = body(&err)
    guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
    return rc
}

/// Collects bytes handed to a `termhost_value_sink`.
final class ByteSink {
    var bytes: [UInt8]? = nil
    static let sink: termhost_value_sink = { user, data, size in
        let box = Unmanaged<ByteSink>.fromOpaque(user!).takeUnretainedValue()
        box.bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
    }

    /// Runs a call that hands its result to `sink` with the given user pointer, and returns the
    /// bytes (none when it never called the sink); a failure throws the callee's code and message.
    static func collect(_ call: (_ user: UnsafeMutableRawPointer, UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(PluginError) -> [UInt8] {
        let box = ByteSink()
        try check { call(Unmanaged.passUnretained(box).toOpaque(), $0) }
        return box.bytes ?? []
    }
}

/// `termhost_host_store_t`: namespaced collections in the host's SQLite store.
public struct Store: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_store_t>

    public func put(_ collection: String, _ key: String, _ value: [UInt8]) throws(PluginError) {
        try check { err in value.withUnsafeBytes { vtable.pointee.put(host, collection, key, $0.baseAddress, $0.count, err) } }
    }

    public func put(_ collection: String, _ key: String, _ value: String) throws(PluginError) {
        try put(collection, key, Array(value.utf8))
    }

    /// nil when the key is absent.
    public func get(_ collection: String, _ key: String) throws(PluginError) -> [UInt8]? {
        let sink = ByteSink()
        var err = termhostEmptyError()
        let rc = vtable.pointee.get(host, collection, key, ByteSink.sink, Unmanaged.passUnretained(sink).toOpaque(), &err)
        if rc == Int32(TERMHOST_ERR_NOT_FOUND) { return nil }
        guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        return sink.bytes
    }

    /// Runs body in one transaction: store calls it makes on this thread join it; a thrown
    /// error rolls everything back and is rethrown.
    public func transaction(_ body: () throws -> Void) throws {
        final class Box { var body: () throws -> Void; var error: (any Error)?; init(_ b: @escaping () throws -> Void) { body = b } }
        try withoutActuallyEscaping(body) { escapable in
            let box = Box(escapable)
            var err = termhostEmptyError()
            let rc = vtable.pointee.transaction(host, { user, err in
                let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
                do { try box.body(); return Int32(TERMHOST_OK) } catch {
                    box.error = error
                    termhostWriteError(err, Int32(TERMHOST_ERR_CANCELLED), "\(error)")
                    return Int32(TERMHOST_ERR_CANCELLED)
                }
            }, Unmanaged.passUnretained(box).toOpaque(), &err)
            if let error = box.error { throw error }
            guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        }
    }

    /// One row of the change journal (`journal_since`).
    public struct JournalRow: Sendable, Equatable {
        public var sequence: Int64
        public var namespace: String
        public var collection: String
        public var key: String
        public var operation: String
    }

    /// Journal rows after a sequence number, oldest first: this plugin's namespace only (ABI 1.3).
    public func journal(after: Int64) throws(PluginError) -> [JournalRow] {
        final class Box { var rows: [JournalRow] = [] }
        let box = Box()
        try check { err in
            vtable.pointee.journal_since(host, after, { user, seq, ns, coll, key, op in
                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().rows.append(JournalRow(
                    sequence: seq, namespace: String(cString: ns!), collection: String(cString: coll!),
                    key: String(cString: key!), operation: String(cString: op!)))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque(), err)
        }
        return box.rows
    }

    public func getString(_ collection: String, _ key: String) throws(PluginError) -> String? {
        try get(collection, key).map { String(decoding: $0, as: UTF8.self) }
    }

    public func remove(_ collection: String, _ key: String) throws(PluginError) {
        try check { vtable.pointee.remove(host, collection, key, $0) }
    }

    /// Every (key, value) in the collection whose key starts with prefix, in key order.
    public func list(_ collection: String, prefix: String = "") throws(PluginError) -> [(key: String, value: [UInt8])] {
        final class Box { var items: [(key: String, value: [UInt8])] = [] }
        let box = Box()
        try check { err in
            vtable.pointee.list(host, collection, prefix, { user, key, value, size in
                let b = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
                b.items.append((String(cString: key!), value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque(), err)
        }
        return box.items
    }
}

/// `termhost_host_secrets_t`: secrets kept apart from the store.
public struct Secrets: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_secrets_t>

    /// Saves the secret and returns its ID (store the ID, never the value).
    public func put(_ value: [UInt8]) throws(PluginError) -> String {
        var id = [CChar](repeating: 0, count: Int(TERMHOST_SECRET_ID_SIZE))
        try check { err in value.withUnsafeBytes { vtable.pointee.put(host, $0.baseAddress, $0.count, &id, err) } }
        return stringFromBuffer(id)
    }

    public func get(_ id: String) throws(PluginError) -> [UInt8]? {
        let sink = ByteSink()
        var err = termhostEmptyError()
        let rc = vtable.pointee.get(host, id, ByteSink.sink, Unmanaged.passUnretained(sink).toOpaque(), &err)
        if rc == Int32(TERMHOST_ERR_NOT_FOUND) { return nil }
        guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        return sink.bytes
    }

    public func remove(_ id: String) throws(PluginError) {
        try check { vtable.pointee.remove(host, id, $0) }
    }
}

/// `termhost_host_interact_t`: prompts through the scene's terminal; fails closed without one.
public struct Interact: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_interact_t>

    public func prompt(_ text: String, scene: UInt64, echo: Bool = true) throws(PluginError) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        try check { vtable.pointee.prompt_text(host, scene, text, echo ? 1 : 0, &buf, buf.count, $0) }
        return stringFromBuffer(buf)
    }

    public func confirm(_ question: String, scene: UInt64) throws(PluginError) -> Bool {
        var answer: Int32 = 0
        try check { vtable.pointee.confirm(host, scene, question, &answer, $0) }
        return answer != 0
    }

    /// Index of the chosen option.
    public func choose(_ prompt: String, from choices: [String], scene: UInt64) throws(PluginError) -> Int {
        let cStrings = choices.map { UnsafePointer(strdup($0)) }
        defer { cStrings.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        var chosen: UInt32 = 0
        try check { err in
            cStrings.withUnsafeBufferPointer { list in
                vtable.pointee.choose(host, scene, prompt, list.baseAddress, UInt32(list.count), &chosen, err)
            }
        }
        return Int(chosen)
    }

    public func notify(_ message: String, scene: UInt64) { vtable.pointee.notify(host, scene, message) }

    /// Whether a prompt on the scene can be shown now (ABI 1.1; an older host answers by
    /// trying, so this says true there).
    public func canPrompt(scene: UInt64) -> Bool {
        guard let canPrompt = TermhostStruct.member(vtable, \.can_prompt) else { return true }
        return canPrompt(host, scene) != 0
    }
}

/// `termhost_host_events_t`: publish JSON payloads; subscriptions are delivered synchronously.
public struct Events: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_events_t>

    public func publish(_ topic: String, json: String? = nil) throws(PluginError) {
        try check { vtable.pointee.publish(host, topic, json, $0) }
    }

    /// A live subscription; call `cancel()` (or let the plugin's deinit end it).
    public final class Subscription: @unchecked Sendable {
        let host: UnsafePointer<termhost_host_t>
        let vtable: UnsafePointer<termhost_host_events_t>
        var token: UInt64 = 0
        let handler: @Sendable (_ topic: String, _ json: String) -> Void
        init(host: UnsafePointer<termhost_host_t>, vtable: UnsafePointer<termhost_host_events_t>,
             handler: @escaping @Sendable (String, String) -> Void) {
            self.host = host
            self.vtable = vtable
            self.handler = handler
        }
        public func cancel() { vtable.pointee.unsubscribe(host, token) }
    }

    /// Subscribes to a topic ("*" for all). Keep the returned subscription alive while it is in
    /// use: the handler is called synchronously on the publisher's thread.
    public func subscribe(_ topic: String, _ handler: @escaping @Sendable (_ topic: String, _ json: String) -> Void) throws(PluginError) -> Subscription {
        let sub = Subscription(host: host, vtable: vtable, handler: handler)
        var token: UInt64 = 0
        try check { err in
            vtable.pointee.subscribe(host, topic, { user, topic, payload in
                let s = Unmanaged<Subscription>.fromOpaque(user!).takeUnretainedValue()
                s.handler(topic.map { String(cString: $0) } ?? "", payload.map { String(cString: $0) } ?? "null")
            }, Unmanaged.passUnretained(sub).toOpaque(), &token, err)
        }
        sub.token = token
        return sub
    }
}

/// `termhost_host_commands_t`: the commands of enabled features, and running one.
public struct Commands: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_commands_t>

    /// [main]: from inside a callback the host made (checked in debug builds, ThreadRules).
    public func list() -> [(name: String, summary: String, feature: String)] {
        ThreadRules.requireMain("commands.list")
        final class Box { var items: [(name: String, summary: String, feature: String)] = [] }
        let box = Box()
        vtable.pointee.list(host, { user, name, summary, feature in
            Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().items.append(
                (String(cString: name!), String(cString: summary!), String(cString: feature!)))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        return box.items
    }

    /// Runs `argv[0]` with the rest as arguments in the scene; returns its exit status.
    /// [main], like `list()`.
    public func run(_ argv: [String], scene: UInt64) throws(PluginError) -> Int32 {
        ThreadRules.requireMain("commands.run")
        let cStrings = argv.map { UnsafePointer(strdup($0)) }
        defer { cStrings.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        var status: Int32 = 0
        try check { err in
            cStrings.withUnsafeBufferPointer { list in
                vtable.pointee.run(host, scene, Int32(list.count), list.baseAddress, &status, err)
            }
        }
        return status
    }
}
