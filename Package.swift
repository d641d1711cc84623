// swift-tools-version: 6.0
// Termhost: a plugin host for SSH tooling. The layout mirrors the architecture:
//   SDK/       the C ABI (SDK/include/termhost) and the Swift layer for plugin authors
//   Registry/  pure Swift feature registry: IDs, ordering, plugin sets, deployment policy
//   Host/      loader, probe, host services, lifecycle manager and the `termhost` CLI
//   Plugins/   one folder per feature plugin, each a .dynamic library
import PackageDescription

let root = Context.packageDirectory
/// Full RELRO for everything Termhost ships: symbols are bound at load (-z now) and the tables
/// holding their addresses are then read-only (-z relro), so a memory bug cannot redirect a call
/// through them. Tests/Packaging/deb.sh checks the installed files.
let fullRELRO = ["-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now"]
let executableLinkerSettings: [LinkerSetting] = [.unsafeFlags(fullRELRO)]
/// Every plugin exports exactly one symbol, its entry point; the rest stays local.
let pluginLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--version-script=\(root)/SDK/Swift/plugin-exports.map"] + fullRELRO),
]
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// libssh2 1.11.1, built by Scripts/libssh2.sh into this private prefix when the system has only
/// 1.10 (Debian 12). The targets that import CLibSSH2 look for its headers there first, and the
/// plugins link it with an rpath there, so a build in .build loads it; Scripts/stage.sh ships a
/// copy beside the staged plugins. The flags do not depend on whether the prefix exists yet:
/// SwiftPM caches this manifest's result by its text and environment, not by files it looks at,
/// and a missing directory is skipped (the system's libssh2 is then used, and one build works on
/// either, since 1.11-only functions are looked up at run time). TERMHOST_SYSTEM_LIBSSH2=1 drops
/// the flags: the operator forces the system's libssh2 (setup then builds none).
/// LIBSSH2_DISABLE_DEPRECATION: 1.11.1 marks functions deprecated whose replacements 1.10 lacks
/// (libssh2_session_callback_set); the code keeps to what both have, as 1.10's headers see it.
let privateLibSSH2 = "\(root)/.build/libssh2-1.11.1"
let usesPrivateLibSSH2 = Context.environment["TERMHOST_SYSTEM_LIBSSH2"] != "1"
let libssh2Swift: [SwiftSetting] = usesPrivateLibSSH2 ? [.unsafeFlags(["-Xcc", "-I\(privateLibSSH2)/include", "-Xcc", "-DLIBSSH2_DISABLE_DEPRECATION"])] : []
let libssh2Linker: [LinkerSetting] = usesPrivateLibSSH2
    ? [.unsafeFlags(["-L\(privateLibSSH2)/lib", "-Xlinker", "-rpath", "-Xlinker", "\(privateLibSSH2)/lib"])] : []

let package = Package(
    name: "Termhost",
    products: [
        .executable(name: "termhost", targets: ["TermhostCLI"]),
        .executable(name: "termhost-probe", targets: ["TermhostProbe"]),
        .executable(name: "termhost-bench", targets: ["TermhostBench"]),
        .executable(name: "termhost-classifier-bench", targets: ["ClassifierBench"]),
        .executable(name: "termhost-tool-call-bench", targets: ["ToolCallBench"]),
        .executable(name: "termhost-sync-bench", targets: ["SyncBench"]),
        .library(name: "TermhostRegistry", targets: ["TermhostRegistry"]),
        .library(name: "TermhostSDK", targets: ["TermhostSDK"]),
        .library(name: "HelloSwiftPlugin", type: .dynamic, targets: ["HelloSwiftPlugin"]),
        .library(name: "ActionsSwiftPlugin", type: .dynamic, targets: ["ActionsSwiftPlugin"]),
        .library(name: "SSHPlugin", type: .dynamic, targets: ["SSHPlugin"]),
        .library(name: "SFTPPlugin", type: .dynamic, targets: ["SFTPPlugin"]),
        .library(name: "MetricsPlugin", type: .dynamic, targets: ["MetricsPlugin"]),
        .library(name: "ForwardingPlugin", type: .dynamic, targets: ["ForwardingPlugin"]),
        .library(name: "AssistantPlugin", type: .dynamic, targets: ["AssistantPlugin"]),
        .library(name: "SyncPlugin", type: .dynamic, targets: ["SyncPlugin"]),
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
        // libffi: typed actions, a plugin's exported C functions called from their declaration.
        .systemLibrary(name: "CFFI", path: "Host/Sources/CFFI"),
        .target(name: "TermhostRuntime",
                dependencies: ["TermhostLoader", "TermhostServices", "TermhostLifecycle", "TermhostRegistry", "TermhostSDK", "CTermhost", "CCrashRecorder", "CFFI"],
                path: "Host/Sources/Runtime", swiftSettings: strict),
        // The daemon's attach protocol: frames, the socket and its lock, the server and client.
        .target(name: "TermhostDaemon", dependencies: ["TermhostRegistry", "TermhostSDK"], path: "Host/Sources/Daemon", swiftSettings: strict),
        .executableTarget(name: "TermhostCLI",
                          dependencies: ["TermhostRuntime", "TermhostLoader", "TermhostRegistry", "TermhostServices", "TermhostSDK", "TermhostDaemon"],
                          path: "Host/Sources/CLI", swiftSettings: strict, linkerSettings: executableLinkerSettings),
        .executableTarget(name: "TermhostProbe", dependencies: ["TermhostRuntime", "TermhostLoader", "TermhostRegistry"],
                          path: "Host/Sources/Probe", swiftSettings: strict, linkerSettings: executableLinkerSettings),

        .executableTarget(name: "TermhostBench", dependencies: ["TermhostRuntime", "TermhostRegistry", "TermhostServices", "CTermhost"],
                          path: "Benchmarks/ABICallCost", swiftSettings: strict),
        // Throughput of the assistant's read-only command classifier (AssistantCore, pure Swift).
        .executableTarget(name: "ClassifierBench", dependencies: ["AssistantCore"], path: "Benchmarks/Classifier", swiftSettings: strict),
        // One tool call through the host, the ABI and the assistant's policy gate, against the tool's own work.
        .executableTarget(name: "ToolCallBench", dependencies: ["TermhostRuntime", "TermhostLoader", "TermhostServices", "AssistantCore", "CTermhost"],
                          path: "Benchmarks/ToolCallCost", swiftSettings: strict),

        // Feature plugins, each a .dynamic library (its manifest is derived at stage time).
        // What the SSH and SFTP plugins share by name: the libssh2 (and libcrypto) module, and
        // the one SHA-256 and HMAC-SHA1 both use. Static code each plugin links, not a plugin.
        .systemLibrary(name: "CLibSSH2", path: "Plugins/Shared/CLibSSH2"),
        .target(name: "SSHCrypto", dependencies: ["CLibSSH2"], path: "Plugins/Shared/SSHCrypto", swiftSettings: strict + libssh2Swift),
        // libssh2's errors read, escaped and mapped (would-block) in one place, for SSH and SFTP.
        .target(name: "LibSSH2", dependencies: ["CLibSSH2", "TermhostSDK"], path: "Plugins/Shared/LibSSH2", swiftSettings: strict + libssh2Swift),
        // How the plugins that offer tools read a call's arguments (range checks, messages).
        .target(name: "ToolArguments", dependencies: ["TermhostSDK", "CTermhost"], path: "Plugins/Shared/ToolArguments", swiftSettings: strict),
        // libssh2 1.10 ciphers one 16-byte block per call; this OpenSSL provider makes its
        // AES-CTR keystream in bulk (see its header).
        .target(name: "BatchedCTR", path: "Plugins/SSH/Sources/BatchedCTR", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "SSHPlugin", dependencies: ["TermhostSDK", "CTermhost", "CLibSSH2", "LibSSH2", "SSHCrypto", "BatchedCTR", "ToolArguments"], path: "Plugins/SSH/Sources/SSHPlugin",
                swiftSettings: strict + libssh2Swift, linkerSettings: pluginLinkerSettings + libssh2Linker),
        // SFTP runs libssh2's SFTP layer on sessions the SSH plugin's transport service lends it.
        .target(name: "SFTPPlugin", dependencies: ["TermhostSDK", "CTermhost", "CLibSSH2", "LibSSH2", "SSHCrypto", "ToolArguments"], path: "Plugins/SFTP/Sources/SFTPPlugin",
                swiftSettings: strict + libssh2Swift, linkerSettings: pluginLinkerSettings + libssh2Linker),

        // Metrics: procfs parsing and computation in a static library of its own (pure Swift,
        // no Foundation; the SDK only for JSON quoting) that the plugin links and the tests import.
        .target(name: "MetricsCore", dependencies: ["TermhostSDK"], path: "Plugins/Metrics/Sources/MetricsCore", swiftSettings: strict),
        .target(name: "MetricsPlugin", dependencies: ["TermhostSDK", "CTermhost", "MetricsCore"], path: "Plugins/Metrics/Sources/MetricsPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        .target(name: "ForwardingPlugin", dependencies: ["TermhostSDK", "CTermhost"], path: "Plugins/Forwarding/Sources/ForwardingPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        // Assistant: the model-independent core (conversation, classifier, policy), pure Swift.
        .target(name: "AssistantCore", dependencies: ["TermhostSDK"], path: "Plugins/Assistant/Sources/AssistantCore", swiftSettings: strict),
        // Model providers (OpenAI Chat Completions and Responses, Anthropic Messages, local servers)
        // over libcurl: HTTP, SSE, the wire formats and retries.
        .systemLibrary(name: "CCurl", path: "Plugins/Assistant/Sources/CCurl"),
        .target(name: "AssistantProviders", dependencies: ["AssistantCore", "CCurl", "TermhostSDK"], path: "Plugins/Assistant/Sources/AssistantProviders",
                swiftSettings: strict),
        .target(name: "AssistantPlugin", dependencies: ["TermhostSDK", "CTermhost", "AssistantCore", "AssistantProviders"], path: "Plugins/Assistant/Sources/AssistantPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        // Sync: the engine, the backend protocol and the folder backend, pure Swift (Foundation only).
        .target(name: "SyncCore", path: "Plugins/Sync/Sources/SyncCore", swiftSettings: strict),
        .target(name: "SyncPlugin", dependencies: ["TermhostSDK", "CTermhost", "SyncCore", "SyncPostgres"], path: "Plugins/Sync/Sources/SyncPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),
        // The PostgreSQL vault backend for teams, over libpq (Debian's libpq-dev).
        .systemLibrary(name: "CLibPQ", path: "Plugins/Sync/Sources/CLibPQ", providers: [.apt(["libpq-dev"])]),
        .target(name: "SyncPostgres", dependencies: ["SyncCore", "CLibPQ"], path: "Plugins/Sync/Sources/SyncPostgres", swiftSettings: strict),
        // Sync figures on the folder and a private PostgreSQL server (Benchmarks/sync.sh).
        .executableTarget(name: "SyncBench", dependencies: ["SyncCore", "SyncPostgres", "TestSupport", "SyncTestSupport"], path: "Benchmarks/SyncBench", swiftSettings: strict),

        // Example plugin in Swift (the C twin lives in SDK/Examples/hello-c, built with make).
        .target(name: "HelloSwiftPlugin", dependencies: ["TermhostSDK"], path: "SDK/Examples/hello-swift/Sources",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        // A typed action in Swift: its version script also exports the @_cdecl function.
        .target(name: "ActionsSwiftPlugin", dependencies: ["TermhostSDK", "CTermhost"], path: "SDK/Examples/actions-swift/Sources",
                swiftSettings: strict,
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(root)/SDK/Examples/actions-swift/exports.map"] + fullRELRO)]),

        .target(name: "SwiftServicesFixture", dependencies: ["TermhostSDK"], path: "Tests/Fixtures/SwiftServicesPlugin",
                swiftSettings: strict, linkerSettings: pluginLinkerSettings),

        .testTarget(name: "RegistryTests", dependencies: ["TermhostRegistry"], swiftSettings: strict),
        .testTarget(name: "ServicesTests", dependencies: ["TermhostServices", "CSQLite", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "LifecycleTests", dependencies: ["TermhostLifecycle", "TermhostRegistry", "TermhostLoader", "TermhostRuntime", "TermhostServices", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "LoaderTests", dependencies: ["TermhostLoader", "TermhostRegistry", "TermhostServices", "TermhostRuntime", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(name: "DaemonTests", dependencies: ["TestSupport", "TermhostDaemon"], swiftSettings: strict),
        .testTarget(name: "SDKTests", dependencies: ["TestSupport", "TermhostSDK", "CTermhost"], swiftSettings: strict),
        .testTarget(name: "SSHPluginTests", dependencies: ["TestSupport", "BatchedCTR", "CCrypto"], swiftSettings: strict),
        .testTarget(name: "SFTPPluginTests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(name: "MetricsPluginTests", dependencies: ["MetricsCore", "TestSupport"], exclude: ["Fixtures"],
                    swiftSettings: strict),
        .testTarget(name: "ForwardingPluginTests", dependencies: ["TestSupport", "ForwardingPlugin"], swiftSettings: strict),
        .testTarget(name: "AssistantTests", dependencies: ["AssistantCore", "AssistantProviders", "TestSupport"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "SyncTests", dependencies: ["SyncCore", "TermhostServices", "TestSupport", "SyncTestSupport"], swiftSettings: strict),
        .testTarget(name: "SyncPostgresTests", dependencies: ["SyncCore", "SyncPostgres", "TestSupport", "SyncTestSupport"], swiftSettings: strict),
        .target(name: "TestSupport", dependencies: ["TestSupportC"], path: "Tests/TestSupport", swiftSettings: strict),
        // Starting test servers as child subreapers (what posix_spawn cannot do).
        .target(name: "TestSupportC", path: "Tests/TestSupportC"),
        // Sync test doubles that wrap a real backend (shared by the folder and PostgreSQL tests).
        .target(name: "SyncTestSupport", dependencies: ["SyncCore"], path: "Tests/SyncTestSupport", swiftSettings: strict),
    ]
)
