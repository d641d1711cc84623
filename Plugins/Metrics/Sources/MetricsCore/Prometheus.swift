/// The Prometheus text exposition format (version 0.0.4) for `metrics serve`: one family per
/// metric with its HELP and TYPE lines first, base units (bytes, seconds, ratios 0-1), a
/// `host` label on every sample. An unknown value is left out, never written as 0.
///
/// Only a live monitor exports values, and only sections that are not stale: a failed,
/// paused or sleeping monitor (or a section that stopped arriving) keeps its `up`, `state`
/// and `sample_age_seconds` series and nothing else, so a dashboard never shows a last value
/// as if it were current.
public enum Prometheus {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    struct Family: Sendable {
        let name: String, help: String
        /// About the monitor itself: exported whatever its state.
        var meta = false
        let samples: @Sendable (HostReport, Double) -> [(labels: [(String, String)], value: Double?)]
    }

    /// The section's value when it may be exported: the monitor is live and the section fresh.
    static func fresh<T>(_ t: Timed<T>?, _ r: HostReport, _ now: Double) -> T? {
        guard r.state == .live, let t, !r.isStale(t.at, now: now) else { return nil }
        return t.value
    }

    static let families: [Family] = [
        Family(name: "termhost_metrics_up", help: "1 when the monitor is live (sampling with known rates), else 0.", meta: true) { r, now in
            [([], r.state == .live ? 1 : 0)]
        },
        Family(name: "termhost_metrics_state", help: "The monitor's state: 1 for the current one, 0 for the others.", meta: true) { r, now in
            MonitorState.allNames.map { ([("state", $0)], r.state.name == $0 ? 1 : 0) }
        },
        Family(name: "termhost_metrics_sample_age_seconds", help: "Seconds since the last sample arrived.", meta: true) { r, now in
            [([], r.uptime.map { max(0, now - $0.at) })]
        },
        Family(name: "termhost_metrics_sample_bytes", help: "Bytes of remote output the last sample took.") { r, now in
            [([], fresh(r.uptime, r, now) == nil ? nil : r.lastSampleBytes.map { Double($0) })]
        },
        Family(name: "termhost_host_uptime_seconds", help: "Seconds since the host booted (/proc/uptime).") { r, now in
            [([], fresh(r.uptime, r, now))]
        },
        Family(name: "termhost_cpu_usage_ratio", help: "Share of CPU time busy over the last interval, all cores (htop's formula).") { r, now in
            [([], fresh(r.cpu, r, now)?.total.map { $0 / 100 })]
        },
        Family(name: "termhost_cpu_core_usage_ratio", help: "Share of CPU time busy over the last interval, per core.") { r, now in
            (fresh(r.cpu, r, now)?.cores ?? []).map { ([("core", String($0.core))], $0.percent.map { $0 / 100 }) }
        },
        Family(name: "termhost_memory_total_bytes", help: "MemTotal.") { r, now in [([], fresh(r.memory, r, now)?.totalBytes)] },
        Family(name: "termhost_memory_available_bytes", help: "MemAvailable.") { r, now in [([], fresh(r.memory, r, now)?.availableBytes)] },
        Family(name: "termhost_memory_used_bytes", help: "MemTotal - MemAvailable.") { r, now in [([], fresh(r.memory, r, now)?.usedBytes)] },
        Family(name: "termhost_swap_total_bytes", help: "SwapTotal.") { r, now in [([], fresh(r.memory, r, now)?.swapTotalBytes)] },
        Family(name: "termhost_swap_used_bytes", help: "SwapTotal - SwapFree.") { r, now in [([], fresh(r.memory, r, now)?.swapUsedBytes)] },
        Family(name: "termhost_load1", help: "Load average over 1 minute.") { r, now in [([], fresh(r.load, r, now)?.one)] },
        Family(name: "termhost_load5", help: "Load average over 5 minutes.") { r, now in [([], fresh(r.load, r, now)?.five)] },
        Family(name: "termhost_load15", help: "Load average over 15 minutes.") { r, now in [([], fresh(r.load, r, now)?.fifteen)] },
        Family(name: "termhost_network_receive_bytes_per_second", help: "Bytes received per second, per interface shown.") { r, now in
            (fresh(r.network, r, now) ?? []).map { ([("interface", $0.name)], $0.receiveBytesPerSecond) }
        },
        Family(name: "termhost_network_transmit_bytes_per_second", help: "Bytes sent per second, per interface shown.") { r, now in
            (fresh(r.network, r, now) ?? []).map { ([("interface", $0.name)], $0.transmitBytesPerSecond) }
        },
        Family(name: "termhost_disk_read_bytes_per_second", help: "Bytes read per second, per whole disk.") { r, now in
            (fresh(r.disks, r, now) ?? []).map { ([("device", $0.name)], $0.readBytesPerSecond) }
        },
        Family(name: "termhost_disk_write_bytes_per_second", help: "Bytes written per second, per whole disk.") { r, now in
            (fresh(r.disks, r, now) ?? []).map { ([("device", $0.name)], $0.writeBytesPerSecond) }
        },
        Family(name: "termhost_filesystem_size_bytes", help: "Filesystem size (collected while details are shown).") { r, now in
            filesystems(r, now).map { ([("mountpoint", $0.mount), ("device", $0.device)], Double($0.sizeBytes)) }
        },
        Family(name: "termhost_filesystem_available_bytes", help: "Filesystem space available to users.") { r, now in
            filesystems(r, now).map { ([("mountpoint", $0.mount), ("device", $0.device)], Double($0.availableBytes)) }
        },
    ]

    /// One series per mount point (the last one listed, the one visible there), whatever
    /// the report holds.
    static func filesystems(_ r: HostReport, _ now: Double) -> [Filesystem] {
        var out: [Filesystem] = []
        for f in fresh(r.filesystems, r, now) ?? [] {
            if let i = out.firstIndex(where: { $0.mount == f.mount }) { out.remove(at: i) }
            out.append(f)
        }
        return out
    }

    public static func render(_ reports: [HostReport], now: Double) -> String {
        var out = ""
        for f in families {
            out += "# HELP \(f.name) \(escapeHelp(f.help))\n# TYPE \(f.name) gauge\n"
            for r in reports where f.meta || r.state == .live {
                for s in f.samples(r, now) {
                    guard let v = s.value, v.isFinite else { continue }
                    let labels = ([("host", r.host)] + s.labels).map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",")
                    out += "\(f.name){\(labels)} \(format(v))\n"
                }
            }
        }
        return out
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : "\(v)"
    }

    static func escapeLabel(_ s: String) -> String {
        var out = ""
        for c in s { switch c { case "\\": out += "\\\\"; case "\"": out += "\\\""; case "\n": out += "\\n"; default: out.append(c) } }
        return out
    }

    static func escapeHelp(_ s: String) -> String {
        var out = ""
        for c in s { switch c { case "\\": out += "\\\\"; case "\n": out += "\\n"; default: out.append(c) } }
        return out
    }
}
