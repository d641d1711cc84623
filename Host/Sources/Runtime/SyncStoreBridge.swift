import CTermhost
import Foundation
import TermhostRegistry
import TermhostSDK
import TermhostServices

/// termhost.sync-store/1 (services/sync_store.h) and termhost_host_store_t.declare_syncable.
/// Every call of the sync-store table first checks that the caller is the sync provider, then
/// that the collection was declared syncable; the secrets file is never opened here.
enum SyncStoreBridge {
    /// Refuses every caller but the sync provider that `SyncProviderChoice` chose (the operator's
    /// policy, else the plugin set, else org.termhost.sync; never a user's config), and everyone
    /// when that choice is unusable.
    static func denied(_ ctx: PluginContext, _ call: String, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status? {
        let choice = ctx.services.syncProvider
        guard let provider = choice.plugin else {
            return termhostFail(err, TERMHOST_ERR_DENIED,
                                "\(call): no plugin may read or write other plugins' syncable records: \(choice.problem ?? choice.source) (see 'termhost doctor')")
        }
        guard ctx.pluginID != provider else { return nil }
        return termhostFail(err, TERMHOST_ERR_DENIED,
                            "\(call): only the sync provider '\(provider)' may read or write other plugins' syncable records; plugin '\(ctx.pluginID)' is not it (named by \(choice.source))")
    }

    /// The declared collection, or a DENIED status naming it.
    static func syncable(_ ctx: PluginContext, _ ns: String, _ collection: String, _ call: String,
                         _ err: UnsafeMutablePointer<termhost_error_t>?) -> Result<SyncableCollections.Declaration, DeniedCall> {
        if let d = ctx.services.syncables.declaration(namespace: ns, collection: collection) { return .success(d) }
        return .failure(DeniedCall(status: termhostFail(err, TERMHOST_ERR_DENIED,
            "\(call): collection '\(VisibleText.of(collection))' of '\(VisibleText.of(ns))' is not declared syncable")))
    }

    struct DeniedCall: Error { let status: termhost_status }

    static func declare(_ host: UnsafePointer<termhost_host_t>?, _ collection: UnsafePointer<CChar>?, _ merge: Int32,
                        _ localFields: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status {
        guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "declare_syncable: host is NULL") }
        let ctx = HostBridge.context(host)
        let name: String, fields: String
        do throws(BoundaryArguments.Refusal) {
            name = try BoundaryArguments.text(collection, "collection", call: "declare_syncable")
            fields = try BoundaryArguments.optionalText(localFields, "local_fields", call: "declare_syncable") ?? ""
        } catch { return HostBridge.refuse(err, error) }
        let list = fields.isEmpty ? [] : fields.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        if let problem = ctx.services.syncables.declare(namespace: ctx.pluginID, collection: name, merge: merge, localFields: list) {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "declare_syncable: \(problem)")
        }
        return termhost_status(TERMHOST_OK)
    }

    static func declareCheck(_ host: UnsafePointer<termhost_host_t>?, _ collection: UnsafePointer<CChar>?, _ check: termhost_sync_check?,
                             _ user: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status {
        guard let host, let check else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "declare_sync_check: host or check is NULL") }
        let ctx = HostBridge.context(host)
        let name: String
        do throws(BoundaryArguments.Refusal) {
            name = try BoundaryArguments.text(collection, "collection", call: "declare_sync_check")
        } catch { return HostBridge.refuse(err, error) }
        if let problem = ctx.services.syncables.declareCheck(namespace: ctx.pluginID, collection: name,
                                                             .init(function: check, user: user)) {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "declare_sync_check: \(problem)")
        }
        return termhost_status(TERMHOST_OK)
    }

    /// The most bytes of an owner's reason that are kept (one line of `sync status`).
    static let reasonBytes = 512

    /// Runs the owner's check on bytes another device wrote: nil when accepted (or no check),
    /// else the owner's reason, shown safe and on one line.
    static func refusal(_ check: SyncableCollections.Check, collection: String, key: String, _ bytes: [UInt8]) -> String? {
        var reason = [CChar](repeating: 0, count: reasonBytes)
        let rc = bytes.withUnsafeBytes { value in
            reason.withUnsafeMutableBufferPointer { r in
                check.function(check.user, collection, key, value.baseAddress, value.count, r.baseAddress, r.count)
            }
        }
        guard rc != 0 else { return nil }
        reason[reasonBytes - 1] = 0   // a check that filled the buffer without its NUL
        let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let shown = VisibleText.of(text.replacingOccurrences(of: "\n", with: " "))
        return shown.isEmpty ? "refused by its owner's check (no reason given)" : shown
    }

    nonisolated(unsafe) static let table: UnsafeMutablePointer<termhost_host_sync_store_t> = {
        let t = UnsafeMutablePointer<termhost_host_sync_store_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_sync_store_t(
            struct_size: UInt32(MemoryLayout<termhost_host_sync_store_t>.size),
            collections: { host, visitor, user, err in
                guard let host, let visitor else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "collections: NULL argument") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "collections", err) { return status }
                for d in ctx.services.syncables.all {
                    if visitor(user, d.namespace, d.collection, d.merge, d.localFields.joined(separator: ",")) != 0 { break }
                }
                return termhost_status(TERMHOST_OK)
            },
            journal_since: { host, after, visitor, user, err in
                guard let host, let visitor else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "journal_since: NULL argument") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "journal_since", err) { return status }
                do {
                    try ctx.services.store!.journal(after: after) { row in
                        guard ctx.services.syncables.declaration(namespace: row.namespace, collection: row.collection) != nil else { return true }
                        return visitor(user, row.sequence, row.namespace, row.collection, row.key, row.operation) == 0
                    }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            get: { host, ns, collection, key, sink, user, err in
                guard let host, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get: NULL argument") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "get", err) { return status }
                let nsText: String, collectionText: String, keyText: String
                do throws(BoundaryArguments.Refusal) {
                    nsText = try BoundaryArguments.text(ns, "namespace", call: "get")
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "get")
                    keyText = try BoundaryArguments.text(key, "key", call: "get")
                } catch { return HostBridge.refuse(err, error) }
                if case .failure(let d) = syncable(ctx, nsText, collectionText, "get", err) { return d.status }
                do {
                    guard let bytes = try ctx.services.store!.get(namespace: nsText, collection: collectionText, key: keyText) else {
                        return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no key '\(VisibleText.of(keyText))' in collection '\(VisibleText.of(collectionText))'")
                    }
                    bytes.withUnsafeBytes { sink(user, $0.baseAddress, $0.count) }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            list: { host, ns, collection, visitor, user, err in
                guard let host, let visitor else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list: NULL argument") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "list", err) { return status }
                let nsText: String, collectionText: String
                do throws(BoundaryArguments.Refusal) {
                    nsText = try BoundaryArguments.text(ns, "namespace", call: "list")
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "list")
                } catch { return HostBridge.refuse(err, error) }
                if case .failure(let d) = syncable(ctx, nsText, collectionText, "list", err) { return d.status }
                do {
                    try ctx.services.store!.list(namespace: nsText, collection: collectionText, prefix: "") { key, value in
                        value.withUnsafeBytes { visitor(user, key, $0.baseAddress, $0.count) } == 0
                    }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            apply: { host, ns, collection, key, value, size, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "apply: host is NULL") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "apply", err) { return status }
                if let problem = HostBridge.sizeProblem(size) { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "apply: \(problem)") }
                let nsText: String, collectionText: String, keyText: String, bytes: [UInt8]?
                do throws(BoundaryArguments.Refusal) {
                    nsText = try BoundaryArguments.text(ns, "namespace", call: "apply")
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "apply")
                    keyText = try BoundaryArguments.text(key, "key", call: "apply")
                    bytes = value == nil ? nil : try BoundaryArguments.bytes(value, size, "value", call: "apply")
                } catch { return HostBridge.refuse(err, error) }
                if case .failure(let d) = syncable(ctx, nsText, collectionText, "apply", err) { return d.status }
                do {
                    // A value already stored is no change: neither written (no journal row) nor
                    // announced, so no plugin retires anything for it or waits on it.
                    if try ctx.services.store!.get(namespace: nsText, collection: collectionText, key: keyText) == bytes {
                        return termhost_status(TERMHOST_OK)
                    }
                } catch { return HostBridge.storeFailure(err, error) }
                let payload = "{\"namespace\":\(JSONText.quoted(nsText)),\"collection\":\(JSONText.quoted(collectionText)),\"key\":\(JSONText.quoted(keyText)),\"deleted\":\(bytes == nil)}"
                ctx.services.events.publish(TERMHOST_EVENT_SYNC_APPLYING, payload)
                do {
                    if let bytes {
                        try ctx.services.store!.put(namespace: nsText, collection: collectionText, key: keyText, value: bytes)
                    } else {
                        try ctx.services.store!.remove(namespace: nsText, collection: collectionText, key: keyText)
                    }
                    return termhost_status(TERMHOST_OK)
                } catch { return HostBridge.storeFailure(err, error) }
            },
            check: { host, ns, collection, key, value, size, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "check: host is NULL") }
                let ctx = HostBridge.context(host)
                if let status = denied(ctx, "check", err) { return status }
                if let problem = HostBridge.sizeProblem(size) { return termhostFail(err, TERMHOST_ERR_TOO_LARGE, "check: \(problem)") }
                let nsText: String, collectionText: String, keyText: String, bytes: [UInt8]
                do throws(BoundaryArguments.Refusal) {
                    nsText = try BoundaryArguments.text(ns, "namespace", call: "check")
                    collectionText = try BoundaryArguments.text(collection, "collection", call: "check")
                    keyText = try BoundaryArguments.text(key, "key", call: "check")
                    bytes = try BoundaryArguments.bytes(value, size, "value", call: "check")
                } catch { return HostBridge.refuse(err, error) }
                if case .failure(let d) = syncable(ctx, nsText, collectionText, "check", err) { return d.status }
                guard let owner = ctx.services.syncables.check(namespace: nsText, collection: collectionText),
                      let why = refusal(owner, collection: collectionText, key: keyText, bytes) else { return termhost_status(TERMHOST_OK) }
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, why)
            }))
        return t
    }()
}
