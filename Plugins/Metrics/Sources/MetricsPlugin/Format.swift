import Foundation
import MetricsCore

/// Human-readable values for the text outputs; "-" is unknown.
enum Format {
    static func bytes(_ v: Double?) -> String {
        guard let v, v.isFinite else { return "-" }
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var x = v, i = 0
        while abs(x) >= 1024 && i < units.count - 1 { x /= 1024; i += 1 }
        return i == 0 ? "\(Int(x)) B" : String(format: "%.1f %@", x, units[i])
    }

    static func rate(_ v: Double?) -> String { v == nil ? "-" : bytes(v) + "/s" }

    static func percent(_ v: Double?) -> String {
        guard let v, v.isFinite else { return "-" }
        return String(format: "%.1f %%", v)
    }

    static func number(_ v: Double?, _ digits: Int = 2) -> String {
        guard let v, v.isFinite else { return "-" }
        return String(format: "%.\(digits)f", v)
    }

    static func duration(_ s: Double?) -> String {
        guard let s, s.isFinite, s >= 0 else { return "-" }
        let t = Int(s)
        if t >= 86400 { return "\(t / 86400) d \(t % 86400 / 3600) h" }
        if t >= 3600 { return "\(t / 3600) h \(t % 3600 / 60) min" }
        if t >= 60 { return "\(t / 60) min \(t % 60) s" }
        return "\(t) s"
    }

    /// s padded (or cut) to width display columns.
    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let n = TerminalText.columns(s)
        guard n < width else { return TerminalText.fit(s, width) }
        return right ? String(repeating: " ", count: width - n) + s : s + String(repeating: " ", count: width - n)
    }

    /// "state" or "failed: reason", for lists and headers.
    static func state(_ s: MonitorState) -> String { s.reason.map { "failed: \($0)" } ?? s.name }

    /// The plain-text `metrics show`.
    static func report(_ r: HostReport, now: Double) -> String {
        var lines: [String] = []
        let age = r.uptime.map { "sampled \(number(now - $0.at, 1)) s ago, every \(Int(r.interval)) s" } ?? "no sample yet"
        lines.append("\(r.host)  \(state(r.state))  (\(age))")
        func stale(_ at: Double?) -> String { at.map { r.isStale($0, now: now) ? "  (stale, \(Int(now - $0)) s old)" : "" } ?? "" }
        lines.append("uptime     \(duration(r.uptime?.value))")
        if let c = r.cpu {
            lines.append("cpu        \(percent(c.value.total))  per core: " + c.value.cores.map { "\($0.core):\(percent($0.percent))" }.joined(separator: " ") + stale(c.at))
        } else { lines.append("cpu        -") }
        if let m = r.memory?.value {
            lines.append("memory     \(bytes(m.usedBytes)) used of \(bytes(m.totalBytes)), available \(bytes(m.availableBytes))" + stale(r.memory?.at))
            lines.append("swap       \(bytes(m.swapUsedBytes)) used of \(bytes(m.swapTotalBytes))")
        } else { lines.append("memory     -") }
        if let l = r.load?.value {
            lines.append("load       \(number(l.one)) \(number(l.five)) \(number(l.fifteen))" + (l.tasks.map { "  (\(l.running ?? 0) running of \($0) tasks)" } ?? ""))
        } else { lines.append("load       -") }
        for i in r.network?.value ?? [] {
            lines.append("network    \(pad(i.name, 10)) receive \(rate(i.receiveBytesPerSecond))  transmit \(rate(i.transmitBytesPerSecond))")
        }
        for d in r.disks?.value ?? [] {
            lines.append("disk       \(pad(d.name, 10)) read \(rate(d.readBytesPerSecond))  write \(rate(d.writeBytesPerSecond))")
        }
        for f in r.filesystems?.value ?? [] {
            lines.append("filesystem \(pad(f.mount, 10)) \(bytes(Double(f.usedBytes))) used of \(bytes(Double(f.sizeBytes)))")
        }
        for g in r.gpus?.value ?? [] {
            lines.append("gpu        \(g.name): \(percent(g.utilizationPercent)), \(bytes(g.memoryUsedBytes)) of \(bytes(g.memoryTotalBytes))")
        }
        if let p = r.processes?.value {
            lines.append("processes  \(p.count), top \(min(p.count, HostReport.maxProcesses)) by CPU:")
            lines.append("  \(pad("PID", 8, right: true))  \(pad("CPU", 8, right: true))  \(pad("RSS", 10, right: true))  NAME")
            for x in p.prefix(HostReport.maxProcesses) {
                lines.append("  \(pad(String(x.pid), 8, right: true))  \(pad(percent(x.cpuPercent), 8, right: true))  \(pad(bytes(x.rssBytes), 10, right: true))  \(x.name)")
            }
        }
        // Remote text (names, mount points, reasons) cannot move the cursor or clear the screen.
        return lines.map(TerminalText.clean).joined(separator: "\n")
    }
}
