import Foundation
import Synchronization
import TermhostSDK

/// `sftp get|put --background`: planned here, with the user's terminal (a password, a host
/// key to accept, a conflict to settle are asked now), then moved by the daemon after the
/// command returned (BackgroundTransfers).
extension SFTPCommand {
    func queue(_ direction: FileJob.Direction, remote: RemoteArgument, local: String, options: TransferOptions, json: Bool) -> Int32 {
        let verb = direction == .download ? "get" : "put"
        if let status = invocation.requireDaemon(host, "termhost sftp \(verb) --background") { return status }
        guard let context = BackgroundTransfers.context(host) else {
            invocation.printError("termhost sftp: the host store or the SSH transport is unavailable; nothing was queued")
            return 1
        }
        for note in TransferQueue.shared.apply(settingsOf: host) { invocation.printError("termhost sftp: setting \(note)") }
        // The policy the user picks at the question is the one a later run applies again.
        let chosen = Mutex<ConflictPolicy?>(nil)
        let ask = conflictQuestion().map { question in
            { @Sendable (count: Int, first: String) -> ConflictPolicy? in
                let answer = question(count, first)
                chosen.withLock { $0 = answer }
                return answer
            }
        }
        let connection: SFTPConnection, plan: TransferPlan
        do throws(SFTPError) {
            connection = try SFTPConnection(transport: transport, destination: remote.host, scene: invocation.scene)
            do throws(SFTPError) {
                plan = try Transfers(transport: transport, checkpoints: checkpoints, ask: ask)
                    .plan(direction, on: connection, remote: remote.path, local: local, options: options)
            } catch {
                connection.close()
                throw error
            }
        } catch {
            invocation.printError(error.message)
            return error.exitStatus
        }
        let record: BackgroundRecord
        do {
            record = try BackgroundTransfers.shared.queue(context) { id in
                BackgroundRecord(id: id, direction: direction, host: remote.host, remote: remote.path, local: local,
                                 recursive: options.recursive, conflict: options.conflict ?? chosen.withLock { $0 },
                                 limit: options.limit, wanted: true, root: plan.directories.first ?? plan.jobs.first?.targetPath,
                                 ended: nil, queued: Date().timeIntervalSince1970)
            } start: { transfer in
                BackgroundTransfers.shared.launch(transfer, first: (connection, plan))
            }
        } catch {
            connection.close()
            invocation.printError("termhost sftp: cannot queue the transfer: \(error.message)")
            return 1
        }
        let files = plan.jobs.count
        if json {
            invocation.print("{\"id\":\(record.id),\"files\":\(files),\"bytes\":\(plan.bytes)}")
        } else {
            invocation.print("transfer \(record.id): \(verb) \(record.from.shown) -> \(record.to.shown), \(files) file\(files == 1 ? "" : "s"), "
                             + "\(ConsoleProgress.size(plan.bytes)); runs in the daemon (termhost transfers)")
        }
        return 0
    }
}
