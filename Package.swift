// swift-tools-version: 6.0
// Termhost: a plugin host for SSH tooling. The layout mirrors the architecture:
//   SDK/       the C ABI (SDK/include/termhost) and the Swift layer for plugin authors
//   Registry/  pure Swift feature registry: IDs, ordering, plugin sets, deployment policy
//   Host/      loader, probe, host services, lifecycle manager and the `termhost` CLI
//   Plugins/   one folder per feature plugin, each a .dynamic library
import PackageDescription

let root = Context.packageDirectory
/// Every plugin exports exactly one symbol, its entry point; the rest stays local.
let pluginLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--version-script=\(root)/SDK/Swift/plugin-exports.map"]),
]
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Termhost",
    products: [
        .executable(name: "termhost", targets: ["TermhostCLI"]),
        .executable(name: "termhost-probe", targets: ["TermhostProbe"]),
        .executable(name: "termhost-bench", targets: ["TermhostBench"]),
        .library(name: "TermhostRegistry", targets: ["TermhostRegistry"]),
        .library(name: "TermhostSDK", targets: ["TermhostSDK"]),
        .library(name: "HelloSwiftPlugin", type: .dynamic, targets: ["HelloSwiftPlugin"]),
        .library(name: "SSHPlugin", type: .dynamic, targets: ["SSHPlugin"]),
        .library(name: "SFTPPlugin", type: .dynamic, targets: ["SFTPPlugin"]),
        .library(name: "MetricsPlugin", type: .dynamic, targets: ["MetricsPlugin"]),
        .library(name: "ForwardingPlugin", type: .dynamic, targets: ["ForwardingPlugin"]),
        // A Swift plugin used only by the tests (exercises every TermhostSDK service wrapper).
        .library(name: "SwiftServicesFixture", type: .dynamic, targets: ["SwiftServicesFixture"]),
    ],
    targets: [
        // The contract: C99 headers, exposed to Swift as a module.
        .target(name: "CTermhost", path: "SDK/CTermhost"),
        .target(name: "TermhostSDK", dependencies: ["CTermhost"], path: "SDK/Swift/TermhostSDK",
                swiftSettings: strict),

        .target(name: "TermhostRegistry", dependencies: ["TermhostSDK"], path: "Registry/Sources", swiftSettings: strict),

        .systemLibrary(name: "CSQLite", path: "Host/Sources/CSQLite"),
        .systemLibrary(name: "CCrypto", path: "Host/Sources/CCrypto"),
        .target(name: "TermhostLoader", dependencies: ["TermhostRegistry", "TermhostSDK", "CTermhost", "CCrypto"],
                path: "Host/Sources/Loader", swiftSettings: strict),
        .target(name: "TermhostServices", dependencies: ["TermhostRegistry", "TermhostSDK", "CSQLite", "CCrypto"],
                path: "Host/Sources/Services", swiftSettings: strict),
        .target(name: "TermhostLifecycle", dependencies: ["TermhostRegistry"],
                path: "Host/Sources/Lifecycle", swiftSettings: strict),
        // The fatal-signal recorder: which plugin call a crash happened in (C: a signal handler).
        .target(name: "CCrashRecorder", path: "Host/Sources/CCrashRecorder"),
        .target(name: "TermhostRuntime",
                dependencies: ["TermhostLoader", "TermhostServices", "TermhostLifecycle", "TermhostRegistry", "TermhostSDK", "CTermhost", "CCrashRecorder"],
                path: "Host/Sources/Runtime", swiftSettings: strict),
        .executableTarget(name: "TermhostCLI",
                          dependencies: ["TermhostRuntime", "TermhostLoader", "TermhostRegistry", "TermhostServices", "TermhostSDK"],
                          path: "Host/Sources/CLI", swiftSettings: strict),
        .executableTarget(name: "TermhostProbe", dependencies: ["TermhostRuntime", "TermhostLoader", "TermhostRegistry"],
                          path: "Host/Sources/Probe", swiftSettings: strict),

        .executableTarget(name: "TermhostBench", dependencies: ["TermhostRuntime", "TermhostRegistry", "TermhostServices", "CTermhost"],
                          path: "Benchmarks/ABICallCost", swiftSettings: strict),

        // Feature plugins, each a .dynamic library (its manifest is derived at stage time).
        // What the SSH and SFTP plugins share by name: the libssh2 (and libcrypto) module, and
        // the one SHA-256 and HMAC-SHA1 both use. Static code each plugin links, not a plugin.
        .systemLibrary(name: "CLibSSH2", path: "Plugins/Shared/CLibSSH2"),
        .target(name: "SSHCrypto", dependencies: ["CLibSSH2"], path: "Plugins/Shared/SSHCrypto", swiftSettings: strict),
        // libssh2 1.10 ciphers one 16-byte block per call; this OpenSSL provider makes its
        // AES-CTR keystream in bulk (see its header).
        .target(name: "BatchedCTR", path: "Plugins/SSH/Sources/BatchedCTR", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "SSHPlugin", dependencies: ["TermhostSDK", "CTermhost", "CLibSSH2", "SSHCrypto", "BatchedCTR"], path: "Plugins/SSH/Sources/SSHPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),
        // SFTP runs libssh2's SFTP layer on sessions the SSH plugin's transport service lends it.
        .target(name: "SFTPPlugin", dependencies: ["TermhostSDK", "CTermhost", "CLibSSH2", "SSHCrypto"], path: "Plugins/SFTP/Sources/SFTPPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        // Metrics: procfs parsing and computation in a static library of its own (pure Swift,
        // no Foundation; the SDK only for JSON quoting) that the plugin links and the tests import.
        .target(name: "MetricsCore", dependencies: ["TermhostSDK"], path: "Plugins/Metrics/Sources/MetricsCore", swiftSettings: strict),
        .target(name: "MetricsPlugin", dependencies: ["TermhostSDK", "CTermhost", "MetricsCore"], path: "Plugins/Metrics/Sources/MetricsPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        .target(name: "ForwardingPlugin", dependencies: ["TermhostSDK", "CTermhost"], path: "Plugins/Forwarding/Sources/ForwardingPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        // Example plugin in Swift (the C twin lives in SDK/Examples/hello-c, built with make).
        .target(name: "HelloSwiftPlugin", dependencies: ["TermhostSDK"], path: "SDK/Examples/hello-swift/Sources",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        .target(name: "SwiftServicesFixture", dependencies: ["TermhostSDK"], path: "Tests/Fixtures/SwiftServicesPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        .testTarget(name: "RegistryTests", dependencies: ["TermhostRegistry"], swiftSettings: strict),
        .testTarget(name: "ServicesTests", dependencies: ["TermhostServices", "CSQLite", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "LifecycleTests", dependencies: ["TermhostLifecycle", "TermhostRegistry", "TermhostLoader", "TermhostRuntime", "TermhostServices", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "LoaderTests", dependencies: ["TermhostLoader", "TermhostRegistry", "TermhostServices", "TermhostRuntime", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(name: "SDKTests", dependencies: ["TestSupport", "TermhostSDK", "CTermhost"], swiftSettings: strict),
        .testTarget(name: "SSHPluginTests", dependencies: ["TestSupport", "BatchedCTR", "CCrypto"], swiftSettings: strict),
        .testTarget(name: "SFTPPluginTests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(name: "MetricsPluginTests", dependencies: ["MetricsCore", "TestSupport"], exclude: ["Fixtures"],
                    swiftSettings: strict),
        .testTarget(name: "ForwardingPluginTests", dependencies: ["TestSupport", "ForwardingPlugin"], swiftSettings: strict),
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
    ]
)
