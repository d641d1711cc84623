import Foundation
import Glibc
import MetricsCore

/// `metrics watch`: a live full-screen dashboard. Per host: state, CPU and memory bars,
/// sparklines of the last five minutes, network and disk rates; below, the process table of
/// the selected host (Tab), sorted by CPU (c) or memory (m); q quits. Redrawn every second,
/// on a key, and at once when the terminal is resized (the size is read on every frame).
struct Dashboard {
    let command: MetricsCommand
    let monitors: MonitorStore

    static func restoreTerminal() { TerminalScreen.leaveAll() }

    func run(_ hosts: [String]) throws -> Int32 {
        let inv = command.invocation
        guard isatty(inv.stdinFD) == 1, isatty(inv.stdoutFD) == 1 else {
            inv.printError("termhost metrics watch: needs a terminal (use 'termhost metrics show HOST' or 'serve' otherwise)")
            return 1
        }
        guard let transport = command.transport() else { return 1 }
        // Scene 0: no prompt can break into the full-screen UI; a host needing a password or
        // trust shows "failed: auth needed" (run 'termhost metrics show HOST' once to answer).
        let set = MonitorSet(explicit: hosts, monitors: monitors, transport: transport, scene: 0, details: false)
        set.sync(force: true)
        var selected = 0
        var byMemory = false
        var observed: Sampler? = nil
        TerminalScreen.enter(scene: inv.scene, input: inv.stdinFD, output: inv.stdoutFD)
        defer {
            TerminalScreen.leave(scene: inv.scene)
            observed?.observeDetails(false)
            set.release()
        }
        // Ctrl-C in the daemon (or the client going away) is termhost.cancel/1, not a signal
        // here: the loop checks it every 250 ms and then returns, giving the terminal back.
        let cancellation = command.host.cancellation
        var lastSize = (0, 0)
        while true {
            if cancellation?.isCancelled(scene: inv.scene) == true { return 130 }
            set.sync()
            let samplers = set.samplers
            if !samplers.isEmpty { selected = min(selected, samplers.count - 1) }
            let focus = samplers.isEmpty ? nil : samplers[selected]
            if focus !== observed {
                observed?.observeDetails(false)
                focus?.observeDetails(true)
                observed = focus
            }
            let size = TerminalScreen.size(inv.stdoutFD)
            let clear = size != lastSize || TerminalScreen.takeRedraw(scene: inv.scene)
            lastSize = size
            let frame = Dashboard.render(samplers.map(\.report), selected: selected, byMemory: byMemory,
                                         columns: size.columns, rows: size.rows, now: Date().timeIntervalSince1970)
            // Only while on screen (TerminalScreen.draw): never in background or after shutdown restored it.
            TerminalScreen.draw(scene: inv.scene, (clear ? "\u{1b}[2J" : "") + "\u{1b}[H" + frame.joined(separator: "\u{1b}[K\r\n") + "\u{1b}[K\u{1b}[J")
            // Wait up to 1 s for a key; a resize or a return to foreground shows up within 250 ms.
            var pfd = pollfd(fd: inv.stdinFD, events: Int16(POLLIN), revents: 0)
            var waited = 0
            while waited < 1000, poll(&pfd, 1, 250) <= 0 {
                waited += 250
                if TerminalScreen.size(inv.stdoutFD) != size || TerminalScreen.redrawPending(scene: inv.scene)
                    || cancellation?.isCancelled(scene: inv.scene) == true { break }
            }
            guard pfd.revents != 0 else { continue }
            var key: UInt8 = 0
            let n = read(inv.stdinFD, &key, 1)
            if n == 0 { return 0 }   // end of input
            if n < 0 { continue }
            switch key {
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3: return 0
            case 9: if !samplers.isEmpty { selected = (selected + 1) % samplers.count }
            case UInt8(ascii: "c"): byMemory = false
            case UInt8(ascii: "m"): byMemory = true
            default: break
            }
        }
    }

    /// The screen as lines, each at most `columns` display columns, with no control characters.
    static func render(_ reports: [HostReport], selected: Int, byMemory: Bool, columns: Int, rows: Int, now: Double) -> [String] {
        let w = max(columns, 20)
        var lines: [String] = []
        let clock = String(rfc3339(now).dropFirst(11).prefix(8))
        lines.append(fit("termhost metrics  \(reports.count) host\(reports.count == 1 ? "" : "s")  sort: \(byMemory ? "memory" : "CPU")  [Tab] host [c/m] sort [q] quit  \(clock)", w))
        if reports.isEmpty { lines.append(fit("No monitors: termhost metrics add HOST", w)) }
        let bar = max(10, min(40, w / 4))
        let spark = max(0, w - bar - 38)
        for (i, r) in reports.enumerated() {
            let mark = i == selected ? ">" : " "
            let up = r.uptime.map { "up \(Format.duration($0.value))" } ?? ""
            let load = r.load.map { "load \(Format.number($0.value.one)) \(Format.number($0.value.five)) \(Format.number($0.value.fifteen))" } ?? ""
            let age = r.uptime.map { r.isStale($0.at, now: now) ? "  stale \(Int(now - $0.at)) s" : "" } ?? ""
            lines.append(fit("\(mark) \(r.host)  [\(Format.state(r.state))]  \(up)  \(load)\(age)", w))
            let cpu = r.cpu?.value.total
            lines.append(fit("  CPU \(meter(cpu.map { $0 / 100 }, bar)) \(Format.pad(Format.percent(cpu), 8, right: true))  "
                             + sparkline(r.history, now: now, width: spark, max: 100) { $0.cpuPercent }, w))
            let m = r.memory?.value
            let memRatio = m.flatMap { m in m.usedBytes.flatMap { u in m.totalBytes.map { $0 > 0 ? u / $0 : 0 } } }
            let top = r.history.compactMap(\.memoryTotalBytes).max() ?? 1
            lines.append(fit("  MEM \(meter(memRatio, bar)) \(Format.pad(Format.bytes(m?.usedBytes), 10, right: true)) of \(Format.bytes(m?.totalBytes))  "
                             + sparkline(r.history, now: now, width: max(0, spark - 12), max: top) { $0.memoryUsedBytes }, w))
            var s = Snapshot(); s.network = r.network?.value; s.disks = r.disks?.value
            let swap = m.map { "swap \(Format.bytes($0.swapUsedBytes))/\(Format.bytes($0.swapTotalBytes))" } ?? ""
            lines.append(fit("  NET rx \(Format.rate(s.networkTotals?.receive)) tx \(Format.rate(s.networkTotals?.transmit))"
                             + "  DISK r \(Format.rate(s.diskTotals?.read)) w \(Format.rate(s.diskTotals?.write))  \(swap)", w))
        }
        if reports.indices.contains(selected), lines.count + 3 < rows {
            let r = reports[selected]
            lines.append(fit(String(repeating: "─", count: w), w))
            lines.append(fit("Processes on \(r.host), by \(byMemory ? "memory" : "CPU")", w))
            lines.append(fit("\(Format.pad("PID", 8, right: true))  \(Format.pad("CPU", 8, right: true))  \(Format.pad("RSS", 10, right: true))  NAME", w))
            let procs = (r.processes?.value ?? []).sorted(by: byMemory ? Compute.byMemory : Compute.byCPU)
            for p in procs.prefix(max(0, rows - lines.count)) {
                lines.append(fit("\(Format.pad(String(p.pid), 8, right: true))  \(Format.pad(Format.percent(p.cpuPercent), 8, right: true))  \(Format.pad(Format.bytes(p.rssBytes), 10, right: true))  \(p.name)", w))
            }
        }
        return Array(lines.prefix(max(rows, 1)))
    }

    /// A line of the screen: remote text cleaned of control characters, cut at w columns.
    static func fit(_ s: String, _ w: Int) -> String { TerminalText.fit(TerminalText.clean(s), w) }

    /// [#####-----] for a ratio 0...1; unknown is all "?".
    static func meter(_ ratio: Double?, _ width: Int) -> String {
        guard let ratio, ratio.isFinite else { return "[" + String(repeating: "?", count: width) + "]" }
        let n = Int((min(max(ratio, 0), 1) * Double(width)).rounded())
        return "[" + String(repeating: "#", count: n) + String(repeating: "-", count: width - n) + "]"
    }

    /// The last five minutes in `width` cells, oldest left; a cell with no known value is blank.
    static func sparkline(_ history: [HistoryPoint], now: Double, width: Int, max top: Double,
                          _ value: (HistoryPoint) -> Double?) -> String {
        guard width > 0 else { return "" }
        let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        var sums = [Double](repeating: 0, count: width), counts = [Int](repeating: 0, count: width)
        let span = HostReport.historySeconds
        for p in history {
            guard let v = value(p), v.isFinite else { continue }
            let i = Int((p.at - (now - span)) / span * Double(width))
            guard i >= 0 && i < width else { continue }
            sums[i] += v
            counts[i] += 1
        }
        return String((0..<width).map { i -> Character in
            guard counts[i] > 0, top > 0 else { return " " }
            let ratio = min(max(sums[i] / Double(counts[i]) / top, 0), 1)
            return blocks[min(blocks.count - 1, Int(ratio * Double(blocks.count - 1) + 0.5))]
        })
    }
}
