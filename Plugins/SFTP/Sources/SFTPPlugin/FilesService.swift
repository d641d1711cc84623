import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// The service other plugins use to browse and transfer files (SDK/include/termhost/sftp/files.h,
/// "org.termhost.sftp.files/1"): the assistant's file tools, for one.
enum FilesService {
    nonisolated(unsafe) static var pluginHost: PluginHost?

    /// Session handles are generation tokens, as the transport's are: a stale one finds nothing.
    private static let sessions = HandleTable<SFTPConnection>()
    /// Running transfers by (caller, cookie), for stop().
    private static let running = Mutex<[String: TransferControl]>([:])

    /// Closes every session other plugins left open (at shutdown), and forgets the host.
    static func closeAll() {
        sessions.removeAll().forEach { $0.close() }
        pluginHost = nil
    }

    /// Runs one request on a session, mapping its failure to a status.
    static func on(_ raw: OpaquePointer?, _ err: UnsafeMutablePointer<termhost_error_t>?,
                   _ body: (RemoteFS) throws(SFTPError) -> Void) -> termhost_status {
        guard let c = sessions.lookup(raw) else { return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no such SFTP session: it was closed, or the handle is not one open() returned") }
        do {
            try c.run { fs, _ throws(SFTPError) in try body(fs) }
            return Int32(TERMHOST_OK)
        } catch {
            return termhostFail(err, error.serviceStatus, error.message)
        }
    }

    static func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

    static func deliver(_ sink: termhost_value_sink?, _ user: UnsafeMutableRawPointer?, _ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { sink?(user, $0.baseAddress, $0.count) }
    }

    nonisolated(unsafe) static let vtable: UnsafeMutablePointer<termhost_sftp_files_t> = {
        let t = UnsafeMutablePointer<termhost_sftp_files_t>.allocate(capacity: 1)
        t.initialize(to: termhost_sftp_files_t(
            struct_size: UInt32(MemoryLayout<termhost_sftp_files_t>.size),
            open: { caller, scene, destination, out, err in
                // The caller names who asks (its scene's prompts, its cookies); a NULL one is a
                // caller's bug, refused like the transport's open refuses it.
                guard caller != nil, let destination = text(destination), let out else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open: NULL caller, destination or out (caller is your plugin's termhost_host_t)")
                }
                guard let host = pluginHost, let transport = SSHTransport(host: host) else {
                    return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "the SFTP feature is not active or the SSH transport is unavailable")
                }
                do throws(SFTPError) {
                    let c = try SFTPConnection(transport: transport, destination: destination, scene: scene)
                    try c.run { fs, _ throws(SFTPError) in _ = try fs.realpath(".") }
                    out.pointee = sessions.insert(c)
                    return Int32(TERMHOST_OK)
                } catch {
                    return termhostFail(err, error.serviceStatus, error.message)
                }
            },
            close: { raw in sessions.remove(raw)?.close() },
            list: { raw, path, sink, user, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in
                    let entry = try fs.stat(path)
                    let entries = entry.isDirectory ? try fs.list(path) : [entry]
                    deliver(sink, user, "[" + entries.map(\.json).joined(separator: ",") + "]")
                }
            },
            stat: { raw, path, follow, sink, user, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "stat: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in deliver(sink, user, try fs.stat(path, follow: follow != 0).json) }
            },
            read: { raw, path, offset, maxBytes, sink, user, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "read: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in
                    let bytes = try fs.read(path, offset: offset, max: Int(min(maxBytes, 64 << 20)))
                    bytes.withUnsafeBytes { sink?(user, $0.baseAddress, $0.count) }
                }
            },
            make_directory: { raw, path, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "make_directory: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in try fs.mkdir(path) }
            },
            remove_file: { raw, path, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "remove_file: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in try fs.remove(path) }
            },
            remove_directory: { raw, path, err in
                guard let path = text(path) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "remove_directory: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in try fs.rmdir(path) }
            },
            rename: { raw, from, to, err in
                guard let from = text(from), let to = text(to) else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "rename: NULL path") }
                return on(raw, err) { fs throws(SFTPError) in try fs.rename(from, to) }
            },
            transfer: { caller, scene, request, progress, user, summarySink, summaryUser, err in
                transfer(caller, scene, request, progress, user, summarySink, summaryUser, err)
            },
            stop: { caller, cookie, pause, err in
                guard caller != nil else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "stop: NULL caller (caller is your plugin's termhost_host_t; cookies are kept per caller)")
                }
                guard let control = running.withLock({ $0[key(caller, cookie)] }) else {
                    return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no running transfer with cookie \(cookie)")
                }
                control.request(pause != 0 ? .pause : .cancel)
                return Int32(TERMHOST_OK)
            }))
        return t
    }()

    static func key(_ caller: UnsafePointer<termhost_host_t>?, _ cookie: UInt64) -> String {
        "\(UInt(bitPattern: caller)):\(cookie)"
    }

    static func transfer(_ caller: UnsafePointer<termhost_host_t>?, _ scene: UInt64, _ request: UnsafePointer<termhost_sftp_transfer_t>?,
                         _ progress: termhost_sftp_progress?, _ user: UnsafeMutableRawPointer?,
                         _ summarySink: termhost_value_sink?, _ summaryUser: UnsafeMutableRawPointer?,
                         _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status {
        guard caller != nil else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "transfer: NULL caller (caller is your plugin's termhost_host_t; cookies are kept per caller)")
        }
        guard let r = request?.pointee, let destination = text(r.destination), let remote = text(r.remote_path), let local = text(r.local_path) else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "transfer: NULL request, destination or path")
        }
        guard let host = pluginHost, let transport = SSHTransport(host: host) else {
            return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "the SFTP feature is not active or the SSH transport is unavailable")
        }
        guard r.conflict <= 3 else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "transfer: conflict \(r.conflict) is not a termhost_sftp_conflict_t value")
        }
        TransferQueue.shared.apply(settingsOf: host)
        var options = TransferOptions()
        options.recursive = r.flags & TERMHOST_SFTP_RECURSIVE != 0
        options.resume = r.flags & TERMHOST_SFTP_RESUME != 0
        options.conflict = [ConflictPolicy.fail, .overwrite, .skip, .keepBoth][Int(r.conflict)]
        options.scene = scene
        let control = TransferControl(limitBytesPerSecond: TermhostStruct.has(r.struct_size, \termhost_sftp_transfer_t.bytes_per_second) ? r.bytes_per_second : 0)
        let name = key(caller, r.cookie)
        if r.cookie != 0 {
            // One cookie, one transfer: a second would make stop() reach the wrong one.
            let taken = running.withLock { table -> Bool in
                if table[name] != nil { return true }
                table[name] = control
                return false
            }
            if taken {
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "transfer: cookie \(r.cookie) already names a running transfer of this plugin")
            }
        }
        defer { if r.cookie != 0 { _ = running.withLock { $0.removeValue(forKey: name) } } }
        let observer = CallbackObserver(progress: progress, user: user)
        let transfers = Transfers(transport: transport, checkpoints: Checkpoints(store: host.store), ask: nil)
        do {
            let s = r.upload != 0
                ? try transfers.upload(host: destination, local: absoluteLocal(local), remote: remote, options: options, observer: observer, control: control)
                : try transfers.download(host: destination, remote: remote, local: absoluteLocal(local), options: options, observer: observer, control: control)
            deliver(summarySink, summaryUser, s.json)
            if s.cancelled > 0 || (control.requested != .none && s.paused + s.notStarted > 0) {
                return termhostFail(err, TERMHOST_ERR_CANCELLED, "sftp: transfer stopped: \(s.done) done, \(s.paused + s.notStarted) paused, \(s.cancelled) cancelled")
            }
            if s.failed + s.paused + s.notStarted > 0 {
                return termhostFail(err, TERMHOST_ERR_IO, s.errors.first ?? "sftp: \(s.failed) failed, \(s.paused + s.notStarted) paused")
            }
            return Int32(TERMHOST_OK)
        } catch {
            return termhostFail(err, error.serviceStatus, error.message)
        }
    }
}

extension SFTPError {
    /// The status a service call that failed this way returns.
    var serviceStatus: Int {
        switch kind {
        case .refused, .denied: TERMHOST_ERR_DENIED
        case .stopped, .paused: TERMHOST_ERR_CANCELLED
        case .remote where status == 2 || status == 10: TERMHOST_ERR_NOT_FOUND
        case .remote where status == 3: TERMHOST_ERR_DENIED
        case .failed: TERMHOST_ERR_INVALID_ARGUMENT
        default: TERMHOST_ERR_IO
        }
    }
}

/// Forwards per-file progress to a C callback.
final class CallbackObserver: TransferObserver, @unchecked Sendable {
    let progress: termhost_sftp_progress?
    let user: UnsafeMutableRawPointer?
    private let files = Mutex<[String: (bytes: UInt64, total: UInt64)]>([:])

    init(progress: termhost_sftp_progress?, user: UnsafeMutableRawPointer?) {
        self.progress = progress
        self.user = user
    }

    func batchStarted(files: Int, bytes: UInt64) {}
    func fileStarted(_ path: String, size: UInt64, offset: UInt64) {
        files.withLock { $0[path] = (offset, size) }
        progress?(user, path, offset, size)
    }
    func progressed(_ path: String, bytes: Int) {
        let now = files.withLock { f -> (UInt64, UInt64) in
            f[path, default: (0, 0)].bytes += UInt64(bytes)
            return (f[path]!.bytes, f[path]!.total)
        }
        progress?(user, path, now.0, now.1)
    }
    func fileFinished(_ path: String, outcome: FileOutcome) { _ = files.withLock { $0.removeValue(forKey: path) } }
    func notice(_ text: String) {}
    func batchFinished(_ summary: BatchSummary) {}
}

extension BatchSummary {
    var json: String {
        "{\"files\":\(files),\"done\":\(done),\"skipped\":\(skipped),\"paused\":\(paused),\"not_started\":\(notStarted),\"failed\":\(failed),\"cancelled\":\(cancelled),\"bytes\":\(bytes),\"seconds\":\(String(format: "%.3f", seconds)),\"errors\":[\(errors.map(JSONText.quoted).joined(separator: ","))]}"
    }
}
