import AssistantCore
import TermhostSDK

/// The settings `maxCallsPerTurn` and `maxCallsPerRun` of org.termhost.assistant (operator
/// policy, or a user's config where the policy lets users override them): how many tool calls
/// one model turn, and one run, may make. Checked where they enter, refused by name.
struct CallLimits {
    var perTurn = RunEngine.defaultCallsPerTurn
    var perRun = RunEngine.defaultCallsPerRun

    static func read(_ host: PluginHost) throws(PluginError) -> CallLimits {
        var limits = CallLimits()
        if let n = try value(host, "maxCallsPerTurn", RunEngine.callsPerTurnRange) { limits.perTurn = n }
        if let n = try value(host, "maxCallsPerRun", RunEngine.callsPerRunRange) { limits.perRun = n }
        return limits
    }

    /// `text` is the setting's JSON value.
    static func value(_ host: PluginHost, _ key: String, _ range: ClosedRange<Int>) throws(PluginError) -> Int? {
        guard let text = try host.setting(feature: "org.termhost.assistant", key: key) else { return nil }
        do { return try BoundedNumber.integer(text, name: "\(key) (setting of org.termhost.assistant)", in: range) } catch {
            throw PluginError(error.description)
        }
    }
}
