// actions-swift: one typed action written in Swift. The function is an ordinary @_cdecl
// function with C parameter types; the feature declares it, and exports.map (this example's
// own version script) exports it beside the entry point.
//   termhost call org.termhost.examples.actions-swift/fahrenheit 21.5
import CTermhost
import TermhostSDK

/// Celsius to Fahrenheit; below absolute zero is an error with a message.
@_cdecl("actions_swift_fahrenheit")
public func fahrenheit(_ celsius: Double, _ err: UnsafeMutablePointer<termhost_error_t>) -> Double {
    guard celsius >= -273.15 else {
        termhostWriteError(err, Int32(TERMHOST_ERR_INVALID_ARGUMENT), "\(celsius) °C is below absolute zero")
        return 0
    }
    return celsius * 9 / 5 + 32
}

final class ActionsSwift: Feature {
    static let info: FeatureInfo = {
        var info = FeatureInfo(id: "org.termhost.examples.actions-swift", version: "1.0.0", displayName: "Actions (Swift)",
                               summary: "A typed action written in Swift.", order: 1000)
        info.actions = [Action("fahrenheit", summary: "Celsius to Fahrenheit", symbol: "actions_swift_fahrenheit",
                               params: [.init("celsius", .double, "a temperature in °C")], result: .double,
                               readOnly: true, takesError: true)]
        return info
    }()

    init(host: PluginHost, scene: SceneInfo) throws {}
}

let plugin = Plugin(id: "org.termhost.examples.actions-swift", version: "1.0.0", features: [ActionsSwift.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
