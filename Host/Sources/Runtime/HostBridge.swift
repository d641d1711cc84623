import Synchronization
import CTermhost
import TermhostSDK
import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostServices

/// The calling plugin behind a `termhost_host_t`: its ID (the store and secrets namespace) and
/// the host services. One per plugin, kept for the life of the process (plugins never unload).
final class PluginContext: @unchecked Sendable {
    let pluginID: String
    let services: HostServices
    init(pluginID: String, services: HostServices) {
        self.pluginID = pluginID
        self.services = services
    }
}

/// Exposes `HostServices` through the C vtables of SDK/include/termhost/services/*.h.
/// The vtables are static; each call finds its plugin through `host->host_data`.
public enum HostBridge {
    /// A `termhost_host_t` for one plugin. It and its context are never freed: the plugin may
    /// keep the pointer until deinit(), and images are never unloaded.
    public static func makeHost(pluginID: String, services: HostServices) -> UnsafePointer<termhost_host_t> {
        reserveTopics(of: pluginID)
        let context = Unmanaged.passRetained(PluginContext(pluginID: pluginID, services: services))
        let host = UnsafeMutablePointer<termhost_host_t>.allocate(capacity: 1)
        host.initialize(to: termhost_host_t(
            struct_size: UInt32(MemoryLayout<termhost_host_t>.size),
            abi: termhost_version_t(major: UInt32(TERMHOST_ABI_MAJOR), minor: UInt32(TERMHOST_ABI_MINOR),
                                    patch: UInt32(TERMHOST_ABI_PATCH)),
            name: UnsafePointer(strdup("termhost")), version: UnsafePointer(strdup(TermhostVersion.string)),
            plugin_id: UnsafePointer(strdup(pluginID)), host_data: context.toOpaque(),
            get_service: { host, id in
                guard let host, let id else { return nil }
                return HostBridge.service(HostBridge.context(host), String(cString: id))
            }))
        return UnsafePointer(host)
    }

    static func context(_ host: UnsafePointer<termhost_host_t>) -> PluginContext {
        Unmanaged<PluginContext>.fromOpaque(host.pointee.host_data).takeUnretainedValue()
    }

    static func service(_ ctx: PluginContext, _ id: String) -> UnsafeRawPointer? {
        switch id {
        case TERMHOST_SERVICE_LOG: return UnsafeRawPointer(logTable)
        case TERMHOST_SERVICE_CONFIG: return UnsafeRawPointer(configTable)
        case TERMHOST_SERVICE_STORE: return ctx.services.store == nil ? nil : UnsafeRawPointer(storeTable)
        case TERMHOST_SERVICE_SECRETS: return UnsafeRawPointer(secretsTable)
        case TERMHOST_SERVICE_INTERACT: return UnsafeRawPointer(interactTable)
        case TERMHOST_SERVICE_EVENTS: return UnsafeRawPointer(eventsTable)
        case TERMHOST_SERVICE_COMMANDS: return UnsafeRawPointer(commandsTable)
        case TERMHOST_SERVICE_CANCEL: return UnsafeRawPointer(cancelTable)
        case TERMHOST_SERVICE_TOOLS: return UnsafeRawPointer(toolsTable)
        case TERMHOST_SERVICE_ENVIRONMENT: return UnsafeRawPointer(EnvironmentBridge.table)
        case TERMHOST_SERVICE_DAEMON: return UnsafeRawPointer(DaemonBridge.table)
        case TERMHOST_SERVICE_SYNC_STORE: return ctx.services.store == nil ? nil : UnsafeRawPointer(SyncStoreBridge.table)
        default: return ctx.services.providedService(id)
        }
    }

    static func str(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }

    /// A size a plugin passes (a size_t, imported as Int: a huge one arrives negative, and
    /// making a buffer of a negative count traps). Values larger than 1 GiB are refused too:
    /// SQLite cannot hold them and copying them would exhaust memory.
    static func sizeProblem(_ size: Int) -> String? {
        do { _ = try BoundedNumber.check(size, name: "the value's size", in: 0...(1 << 30), unit: "bytes") } catch {
            return error.description
        }
        return nil
    }

    static func refuse(_ err: UnsafeMutablePointer<termhost_error_t>?, _ refusal: BoundaryArguments.Refusal) -> termhost_status {
        termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, refusal.message)
    }

    static func storeFailure(_ err: UnsafeMutablePointer<termhost_error_t>?, _ error: any Error) -> termhost_status {
        guard let e = error as? StoreError else { return termhostFail(err, TERMHOST_ERR_INTERNAL, "\(error)") }
        let code = switch e.kind {
        case .busy: TERMHOST_ERR_BUSY
        case .notFound: TERMHOST_ERR_NOT_FOUND
        case .invalid: TERMHOST_ERR_INVALID_ARGUMENT
        case .io: TERMHOST_ERR_IO
        }
        return termhostFail(err, code, e.message)
    }

    // MARK: log

    nonisolated(unsafe) static let logTable: UnsafeMutablePointer<termhost_host_log_t> = {
        let t = UnsafeMutablePointer<termhost_host_log_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_log_t(
            struct_size: UInt32(MemoryLayout<termhost_host_log_t>.size),
            log: { host, level, message in
                guard let host else { return }
                let ctx = HostBridge.context(host)
                let l = LogSink.Level(rawValue: Int(level.rawValue)) ?? .error
                ctx.services.log.log(l, ctx.pluginID, HostBridge.str(message))
            }))
        return t
    }()

    // MARK: config

    nonisolated(unsafe) static let configTable: UnsafeMutablePointer<termhost_host_config_t> = {
        let t = UnsafeMutablePointer<termhost_host_config_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_config_t(
            struct_size: UInt32(MemoryLayout<termhost_host_config_t>.size),
            get_setting: { host, feature, key, buf, size, needed, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get_setting: host is NULL") }
                let ctx = HostBridge.context(host)
                let featureText: String, keyText: String
                do throws(BoundaryArguments.Refusal) {
                    featureText = try BoundaryArguments.text(feature, "feature_id", call: "get_setting")
                    // A NULL key used to read as "" and answer NOT_FOUND, hiding the caller's bug.
                    keyText = try BoundaryArguments.text(key, "key", call: "get_setting")
                } catch { return HostBridge.refuse(err, error) }
                guard let id = try? FeatureID(featureText) else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get_setting: invalid feature ID '\(VisibleText.of(featureText))'")
                }
                guard let value = ctx.services.policy.setting(id, keyText) else {
                    return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "setting '\(VisibleText.of(keyText))' of '\(id)' is not set")
                }
                let text = Array(value.description.utf8)
                needed?.pointee = text.count + 1
                guard let buf, size > text.count else {
                    return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "setting '\(keyText)' needs \(text.count + 1) bytes")
                }
                text.withUnsafeBytes { UnsafeMutableRawPointer(buf).copyMemory(from: $0.baseAddress!, byteCount: text.count) }
                buf[text.count] = 0
                return termhost_status(TERMHOST_OK)
            },
            is_feature_enabled: { host, feature in
                guard let host, let id = try? FeatureID(HostBridge.str(feature)) else { return 0 }
                return HostBridge.context(host).services.featureEnabled(id) ? 1 : 0
            }))
        return t
    }()

    // MARK: store

    nonisolated(unsafe) static let storeTable: UnsafeMutablePointer<termhost_host_store_t> = {
        let t = UnsafeMutablePointer<termhost_host_store_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_store_t(
            struct_size: UInt32(MemoryLayout<termhost_host_store_t>.size),
            put: { host, collection, key, value, size, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "put: host is NULL") }
                if let problem = HostBridge.sizeProblem(size) { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "put: \(problem)") }
                let ctx = HostBridge.context(host)
                let collectionText: String, keyText: String, bytes: [UInt8]
                do throws(BoundaryArguments.Refusal) {
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "put")
                    keyText = try BoundaryArguments.text(key, "key", call: "put")
                    bytes = try BoundaryArguments.bytes(value, size, "value", call: "put")
                } catch { return HostBridge.refuse(err, error) }
                do {
                    try ctx.services.store!.put(namespace: ctx.pluginID, collection: collectionText, key: keyText, value: bytes)
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            get: { host, collection, key, sink, user, err in
                guard let host, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get: host or sink is NULL") }
                let ctx = HostBridge.context(host)
                let collectionText: String, keyText: String
                do throws(BoundaryArguments.Refusal) {
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "get")
                    keyText = try BoundaryArguments.text(key, "key", call: "get")
                } catch { return HostBridge.refuse(err, error) }
                do {
                    guard let bytes = try ctx.services.store!.get(namespace: ctx.pluginID, collection: collectionText, key: keyText) else {
                        return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no key '\(VisibleText.of(keyText))' in collection '\(VisibleText.of(collectionText))'")
                    }
                    bytes.withUnsafeBytes { sink(user, $0.baseAddress, $0.count) }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            remove: { host, collection, key, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "remove: host is NULL") }
                let ctx = HostBridge.context(host)
                let collectionText: String, keyText: String
                do throws(BoundaryArguments.Refusal) {
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "remove")
                    keyText = try BoundaryArguments.text(key, "key", call: "remove")
                } catch { return HostBridge.refuse(err, error) }
                do {
                    let existed = try ctx.services.store!.remove(namespace: ctx.pluginID, collection: collectionText, key: keyText)
                    return existed ? termhost_status(TERMHOST_OK)
                        : termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no key '\(VisibleText.of(keyText))' in collection '\(VisibleText.of(collectionText))'")
                } catch { return HostBridge.storeFailure(err, error) }
            },
            list: { host, collection, prefix, visitor, user, err in
                guard let host, let visitor else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list: host or visitor is NULL") }
                let ctx = HostBridge.context(host)
                let collectionText: String, prefixText: String
                do throws(BoundaryArguments.Refusal) {
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "list")
                    prefixText = try BoundaryArguments.optionalText(prefix, "prefix", call: "list") ?? ""
                } catch { return HostBridge.refuse(err, error) }
                do {
                    try ctx.services.store!.list(namespace: ctx.pluginID, collection: collectionText, prefix: prefixText) { key, value in
                        value.withUnsafeBytes { visitor(user, key, $0.baseAddress, $0.count) } == 0
                    }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            transaction: { host, body, user, err in
                guard let host, let body else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "transaction: NULL argument") }
                struct BodyFailed: Error { let code: termhost_status }
                do {
                    try HostBridge.context(host).services.store!.transaction {
                        let rc = body(user, err)
                        if rc != termhost_status(TERMHOST_OK) { throw BodyFailed(code: rc) }
                    }
                    return termhost_status(TERMHOST_OK)
                } catch let e as BodyFailed {
                    return e.code
                } catch let e as StoreError {
                    return HostBridge.storeFailure(err, e)
                } catch {
                    return termhostFail(err, TERMHOST_ERR_INTERNAL, "\(error)")
                }
            },
            journal_since: { host, after, visitor, user, err in
                guard let host, let visitor else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "journal_since: NULL argument") }
                // Since 1.3 the caller's own namespace only: other plugins' keys are theirs, and the
                // sync provider reads syncable ones through termhost.sync-store/1.
                let ctx = HostBridge.context(host)
                do {
                    try ctx.services.store!.journal(after: after) { row in
                        row.namespace != ctx.pluginID || visitor(user, row.sequence, row.namespace, row.collection, row.key, row.operation) == 0
                    }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            declare_syncable: { host, collection, merge, localFields, err in
                SyncStoreBridge.declare(host, collection, merge, localFields, err)
            },
            declare_sync_check: { host, collection, check, user, err in
                SyncStoreBridge.declareCheck(host, collection, check, user, err)
            }))
        return t
    }()

    // MARK: secrets

    /// A secrets file that cannot be used (too open, garbage, a symbolic link) is reported by
    /// the host itself, once per process and problem, naming the file: a plugin may turn the
    /// error into something vaguer ("Permission denied (publickey)" after a key it could not
    /// read), and the user must still learn which file to fix.
    static func secretsFailure(_ ctx: PluginContext, _ err: UnsafeMutablePointer<termhost_error_t>?, _ error: any Error) -> termhost_status {
        let message = (error as? StoreError)?.message ?? "\(error)"
        if reportedSecretsProblems.withLock({ $0.insert(message).inserted }) {
            ctx.services.log.log(.error, "host", message)
        }
        return storeFailure(err, error)
    }

    static let reportedSecretsProblems = Mutex<Set<String>>([])


    nonisolated(unsafe) static let secretsTable: UnsafeMutablePointer<termhost_host_secrets_t> = {
        let t = UnsafeMutablePointer<termhost_host_secrets_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_secrets_t(
            struct_size: UInt32(MemoryLayout<termhost_host_secrets_t>.size),
            put: { host, value, size, outID, err in
                guard let host, let outID else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "put: host or out_id is NULL") }
                if let problem = HostBridge.sizeProblem(size) { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "put: \(problem)") }
                let ctx = HostBridge.context(host)
                var bytes: [UInt8]
                do throws(BoundaryArguments.Refusal) { bytes = try BoundaryArguments.bytes(value, size, "value", call: "put") }
                catch { return HostBridge.refuse(err, error) }
                defer { for i in bytes.indices { bytes[i] = 0 } }
                do {
                    let id = Array(try ctx.services.secrets.put(namespace: ctx.pluginID, value: bytes).utf8)
                    for (i, b) in id.enumerated() { outID[i] = CChar(bitPattern: b) }
                    outID[id.count] = 0
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.secretsFailure(ctx, err, error) }
            },
            get: { host, id, sink, user, err in
                guard let host, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get: host or sink is NULL") }
                let ctx = HostBridge.context(host)
                let idText: String
                do throws(BoundaryArguments.Refusal) { idText = try BoundaryArguments.text(id, "id", call: "get") }
                catch { return HostBridge.refuse(err, error) }
                do {
                    guard var bytes = try ctx.services.secrets.get(namespace: ctx.pluginID, id: idText) else {
                        return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no secret with ID '\(VisibleText.of(idText))'")
                    }
                    bytes.withUnsafeBytes { sink(user, $0.baseAddress, $0.count) }
                    for i in bytes.indices { bytes[i] = 0 }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.secretsFailure(ctx, err, error) }
            },
            remove: { host, id, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "remove: host is NULL") }
                let ctx = HostBridge.context(host)
                let idText: String
                do throws(BoundaryArguments.Refusal) { idText = try BoundaryArguments.text(id, "id", call: "remove") }
                catch { return HostBridge.refuse(err, error) }
                do {
                    return try ctx.services.secrets.remove(namespace: ctx.pluginID, id: idText)
                        ? termhost_status(TERMHOST_OK)
                        : termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no secret with ID '\(VisibleText.of(idText))'")
                } catch { return HostBridge.secretsFailure(ctx, err, error) }
            }))
        return t
    }()

    // MARK: events

    /// Every plugin installed (loaded or not) and every one given a host, for the rule that a
    /// topic under a plugin's ID is that plugin's to publish.
    static let pluginIDs = Mutex<Set<String>>([])

    /// Reserves the topics under `pluginID` for that plugin. [any-thread]
    public static func reserveTopics(of pluginID: String) { pluginIDs.withLock { _ = $0.insert(pluginID) } }

    /// The plugin whose ID the topic lies under (the longest such ID), if that is not
    /// `publisher`: a plugin that could publish under another's ID could forge its events (an
    /// approval the assistant never asked for, a host the SSH plugin never changed).
    static func topicOwner(_ topic: String, publisher: String) -> String? {
        let owner = pluginIDs.withLock { ids in
            ids.filter { topic == $0 || topic.hasPrefix($0 + ".") }.max { $0.count < $1.count }
        }
        return owner == publisher ? nil : owner
    }

    nonisolated(unsafe) static let eventsTable: UnsafeMutablePointer<termhost_host_events_t> = {
        let t = UnsafeMutablePointer<termhost_host_events_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_events_t(
            struct_size: UInt32(MemoryLayout<termhost_host_events_t>.size),
            publish: { host, topic, payload, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "publish: host is NULL") }
                let topicText: String, json: String
                do throws(BoundaryArguments.Refusal) {
                    topicText = try BoundaryArguments.topic(topic, call: "publish")
                    json = try BoundaryArguments.json(payload, call: "publish")
                } catch { return HostBridge.refuse(err, error) }
                // The host's topics are the host's: a plugin that could publish them could forge
                // a phase change, a scene, or a command-line tool call for the audit log.
                if topicText == "termhost" || topicText.hasPrefix("termhost.") {
                    return termhostFail(err, TERMHOST_ERR_DENIED, "publish: topic '\(topicText)' is the host's (topics beginning with 'termhost.' "
                                        + "are published by the host only); publish under your plugin's ID")
                }
                let ctx = HostBridge.context(host)
                if let owner = HostBridge.topicOwner(topicText, publisher: ctx.pluginID) {
                    return termhostFail(err, TERMHOST_ERR_DENIED, "publish: topic '\(topicText)' belongs to plugin '\(owner)' (a topic under a "
                                        + "plugin's ID is published by that plugin only); publish under your plugin's ID")
                }
                ctx.services.events.publish(topicText, json)
                return termhost_status(TERMHOST_OK)
            },
            subscribe: { host, topic, handler, user, token, err in
                guard let host, let handler, let token else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "subscribe: host, handler or token is NULL") }
                let ctx = HostBridge.context(host)
                let topicText: String
                do throws(BoundaryArguments.Refusal) { topicText = try BoundaryArguments.topic(topic, call: "subscribe", wildcard: true) }
                catch { return HostBridge.refuse(err, error) }
                let userBits = UInt(bitPattern: user)
                token.pointee = ctx.services.events.subscribe(owner: ctx.pluginID, topic: topicText) { topic, payload in
                    handler(UnsafeMutableRawPointer(bitPattern: userBits), topic, payload)
                }
                return termhost_status(TERMHOST_OK)
            },
            unsubscribe: { host, token in
                guard let host else { return }
                HostBridge.context(host).services.events.unsubscribe(token)
            }))
        return t
    }()

    // MARK: commands

    nonisolated(unsafe) static let commandsTable: UnsafeMutablePointer<termhost_host_commands_t> = {
        let t = UnsafeMutablePointer<termhost_host_commands_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_commands_t(
            struct_size: UInt32(MemoryLayout<termhost_host_commands_t>.size),
            list: { host, visitor, user in
                guard let host, let visitor else { return }
                for c in HostBridge.context(host).services.commandList() where visitor(user, c.name, c.summary, c.feature) != 0 { break }
            },
            run: { host, scene, argc, argv, status, err in
                guard let host, let argv, argc > 0 else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "run: no command") }
                // Every argument, not only the name: a NULL one used to become "" and a non-UTF-8
                // one was rewritten, so the command ran with arguments the caller never passed.
                var args: [String] = []
                do throws(BoundaryArguments.Refusal) {
                    for i in 0..<Int(argc) { args.append(try BoundaryArguments.text(argv[i], "argv[\(i)]", call: "run")) }
                } catch { return HostBridge.refuse(err, error) }
                if let refusal = CommandDepth.refusal(args[0]) { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, refusal) }
                guard let rc = HostBridge.context(host).services.runCommand(scene, args) else {
                    return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no enabled feature contributes command '\(args[0])'")
                }
                status?.pointee = rc
                return termhost_status(TERMHOST_OK)
            }))
        return t
    }()
}

public enum TermhostVersion {
    public static let string = "0.1.0"
}
