import TermhostRegistry
import TermhostSDK

/// Design: a plugin declares its ID, version, ABI and features once, in its code. The manifest
/// the host reads before running any plugin code is derived from that code at build time
/// (`termhost plugins manifest`, from the probe's report), so the two agree by construction;
/// the probe still compares them when the plugin loads, which catches a manifest edited by hand
/// or left over from an older build.
extension PluginManifest {
    /// The manifest of a library whose probe reported `report`: "abi" is the minor its entry
    /// declares it needs (TERMHOST_ABI_MINOR_NEEDED, `Plugin(abiMinorNeeded:)`), "library"
    /// the file's base name. No architecture or sha256: those pins are a distributor's choice.
    public init(derivedFrom report: ProbeReport, library: String) {
        self.init(id: report.pluginID, version: report.pluginVersion,
                  abi: report.abi.prefix(2).map(String.init).joined(separator: "."),
                  library: library, architecture: nil, sha256: nil, features: report.features)
    }

    /// The manifest as JSON in the order a reader expects (plugin, then each feature's identity,
    /// placement, services, commands, tools and actions), two-space indented. Absent and empty fields are left
    /// out, as they mean the same to the loader.
    public var jsonText: String {
        let q = JSONText.quoted
        var fields = [("id", q(id)), ("version", q(version)), ("abi", q(abi)), ("library", q(library))]
        if let architecture { fields.append(("architecture", q(architecture))) }
        if let sha256 { fields.append(("sha256", q(sha256))) }
        var lines = ["{"] + fields.map { "  \"\($0.0)\": \($0.1)," } + ["  \"features\": ["]
        for (i, f) in features.enumerated() {
            var members = [("id", q(f.id.rawValue)), ("version", q(f.version))]
            if let displayName = f.displayName { members.append(("displayName", q(displayName))) }
            if let summary = f.summary { members.append(("summary", q(summary))) }
            members += [("order", String(f.order ?? 0)), ("scope", q((f.scope ?? .process).description))]
            let lists: [(String, [String]?)] = [
                ("after", f.after?.map(\.rawValue)), ("before", f.before?.map(\.rawValue)), ("requires", f.requires?.map(\.rawValue)),
                ("requiresServices", f.requiresServices), ("providesServices", f.providesServices),
            ]
            for (key, items) in lists where !(items ?? []).isEmpty {
                members.append((key, "[" + items!.map(q).joined(separator: ", ") + "]"))
            }
            let commands = (f.commands ?? []).map { c in
                "        { \"name\": \(q(c.name)), \"summary\": \(q(c.summary))" + (c.usage.map { ", \"usage\": \(q($0))" } ?? "") + " }"
            }
            if !commands.isEmpty { members.append(("commands", "[\n" + commands.joined(separator: ",\n") + "\n      ]")) }
            let tools = (f.tools ?? []).map { t in
                "        { \"name\": \(q(t.name)), \"description\": \(q(t.description)), \"inputSchema\": \(t.inputSchema), "
                    + "\"readOnly\": \(t.readOnly), \"parallelSafe\": \(t.parallelSafe), "
                    + "\"modes\": [\(t.modes.map { q($0.rawValue) }.joined(separator: ", "))] }"
            }
            if !tools.isEmpty { members.append(("tools", "[\n" + tools.joined(separator: ",\n") + "\n      ]")) }
            let actions = (f.actions ?? []).map { a in
                let params = a.params.map { "{ \"name\": \(q($0.name)), \"type\": \(q($0.type.rawValue)), \"description\": \(q($0.description)) }" }
                return "        { \"name\": \(q(a.name)), \"summary\": \(q(a.summary)), \"symbol\": \(q(a.symbol)),\n"
                    + "          \"params\": [\(params.joined(separator: ", "))],\n"
                    + "          \"result\": \(q(a.result.rawValue)), \"readOnly\": \(a.readOnly), \"thread\": \(q(a.thread.rawValue)), "
                    + "\"takesError\": \(a.takesError) }"
            }
            if !actions.isEmpty { members.append(("actions", "[\n" + actions.joined(separator: ",\n") + "\n      ]")) }
            if f.concurrentCommands == true { members.append(("concurrentCommands", "true")) }
            lines.append("    {")
            lines += members.enumerated().map { j, m in "      \"\(m.0)\": \(m.1)" + (j == members.count - 1 ? "" : ",") }
            lines.append("    }" + (i == features.count - 1 ? "" : ","))
        }
        lines += ["  ]", "}"]
        return lines.joined(separator: "\n") + "\n"
    }
}
