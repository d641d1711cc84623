import TermhostSDK

/// The value options of `termhost hosts add|edit`: each value is checked (HostRules, numbers
/// through BoundedNumber) before it changes the record, and a refusal names the option, the
/// value and the rule, e.g. `--port must be a whole number from 1 to 65535, not '99999'`.
enum HostOption: String, CaseIterable {
    case port = "--port", user = "--user", identity = "--identity", tag = "--tag", untag = "--untag", jump = "--jump",
         address = "--address", keepalive = "--keepalive", keepaliveCount = "--keepalive-count",
         forwardAgent = "--forward-agent", remoteTmux = "--remote-tmux", sendEnv = "--send-env", setEnv = "--set-env", certificate = "--certificate",
         hostKeyAlias = "--host-key-alias", addIdentity = "--add-identity"

    /// Sets the value on the record, or says why it is refused (and leaves the record alone).
    func apply(_ value: String, to record: inout HostRecord) -> String? {
        do {
            switch self {
            case .port: record.port = try HostRules.port(value, name: rawValue)
            case .keepalive:
                record.keepaliveInterval = try BoundedNumber.integer(value, name: rawValue, in: HostRules.keepaliveSeconds, unit: "seconds")
            case .keepaliveCount:
                record.keepaliveCountMax = try BoundedNumber.integer(value, name: rawValue, in: HostRules.keepaliveCounts, unit: "probes")
            case .user:
                if let why = HostRules.user(value) { return refused(value, why) }
                record.user = value
            case .identity:
                if let why = HostRules.path(value) { return refused(value, why) }
                record.identityFile = value
            case .tag:
                if let why = HostRules.tag(value) { return refused(value, why) }
                if !(record.tags ?? []).contains(value) { record.tags = (record.tags ?? []) + [value] }
            case .untag:   // a tag decides which assistant rules hold on the host: it must be removable
                guard (record.tags ?? []).contains(value) else { return "\(rawValue) '\(VisibleText.of(value))': the host has no such tag" }
                record.tags = record.tags?.filter { $0 != value }
                if record.tags?.isEmpty == true { record.tags = nil }
            case .address:
                if let why = HostRules.address(value) { return refused(value, why) }
                record.address = value
            case .forwardAgent:   // ssh_config's words; off is the default, so it is not stored
                guard value == "yes" || value == "no" else { return "\(rawValue) must be yes or no, not '\(VisibleText.of(value))'" }
                record.forwardAgent = value == "yes" ? true : nil
            case .remoteTmux:   // persistent sessions' shells in remote tmux (Docs/Daemon.md); off unless set
                guard value == "yes" || value == "no" else { return "\(rawValue) must be yes or no, not '\(VisibleText.of(value))'" }
                record.remoteTmux = value == "yes" ? true : nil
            case .certificate:   // an empty value goes back to FILE-cert.pub beside the key
                if value.isEmpty { record.certificateFile = nil; break }
                if let why = HostRules.path(value) { return refused(value, why) }
                record.certificateFile = value
            case .addIdentity:   // another key file, tried after --identity's; an empty value clears them
                if value.isEmpty { record.moreIdentityFiles = nil; break }
                if let why = HostRules.path(value) { return refused(value, why) }
                let more = (record.moreIdentityFiles ?? []) + [value]
                if more.count >= HostRules.maxIdentityFiles { return refused(value, "a host may have at most \(HostRules.maxIdentityFiles) identity files") }
                record.moreIdentityFiles = more
            case .hostKeyAlias:   // an empty value goes back to the address
                if value.isEmpty { record.hostKeyAlias = nil; break }
                if let why = HostRules.address(value) { return refused(value, why) }
                record.hostKeyAlias = value
            case .sendEnv:   // appended, as ssh_config's SendEnv lines add up; an empty value clears them
                if value.isEmpty { record.sendEnv = nil; break }
                let list = (record.sendEnv ?? []) + [value]
                if let why = HostRules.environment(sendEnv: list, setEnv: nil) { return refused(value, why) }
                record.sendEnv = list
            case .setEnv:   // NAME=VALUE replaces NAME's entry; an empty value clears them all
                if value.isEmpty { record.setEnv = nil; break }
                let name = value.prefix { $0 != "=" }
                let list = (record.setEnv ?? []).filter { $0.prefix { $0 != "=" } != name } + [value]
                if let why = HostRules.environment(sendEnv: nil, setEnv: list) { return refused(value, why) }
                record.setEnv = list
            case .jump:   // an empty value clears the route
                let hops = value.isEmpty ? [] : value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                if let why = HostRules.jump(hops) { return refused(value, why) }
                record.jump = hops.isEmpty ? nil : hops
            }
        } catch {
            return error.description
        }
        return nil
    }

    private func refused(_ value: String, _ why: String) -> String { "\(rawValue) '\(VisibleText.of(value))': \(why)" }
}
