import CTermhost

/// Where a feature's instances live; see `termhost_scope_t`.
public enum Scope: Sendable {
    case process, scene, workspace

    var raw: termhost_scope_t {
        switch self {
        case .process: TERMHOST_SCOPE_PROCESS
        case .scene: TERMHOST_SCOPE_SCENE
        case .workspace: TERMHOST_SCOPE_WORKSPACE
        }
    }
}

/// A command a feature contributes: `termhost <name> ...`.
public struct Command: Sendable {
    public var name: String
    public var summary: String
    public var usage: String?

    public init(_ name: String, summary: String, usage: String? = nil) {
        self.name = name
        self.summary = summary
        self.usage = usage
    }
}

/// The static description of a feature; mirrors `termhost_feature_descriptor_t`.
public struct FeatureInfo: Sendable {
    public var id: String
    public var version: String
    public var displayName: String
    public var summary: String?
    public var order: Int32
    public var scope: Scope
    public var after: [String]
    public var before: [String]
    public var requiresFeatures: [String]
    public var requiresServices: [String]
    public var providesServices: [String]
    public var commands: [Command]
    /// Tools for the assistant and MCP clients (ABI 1.3); the feature implements `ToolProviding`.
    public var tools: [Tool]
    /// Typed actions (ABI 1.3): exported `@_cdecl` functions the host calls through libffi.
    public var actions: [Action] = []
    /// ABI 1.6 (`concurrent_commands`): `run` may be called again while it runs, on another
    /// thread, and the daemon then runs one command per client at once. Set it only when each
    /// command's state is its own or locked.
    public var concurrentCommands = false

    public init(id: String, version: String, displayName: String, summary: String? = nil,
                order: Int32 = 0, scope: Scope = .process, after: [String] = [], before: [String] = [],
                requiresFeatures: [String] = [], requiresServices: [String] = [],
                providesServices: [String] = [], commands: [Command] = [], tools: [Tool] = [],
                concurrentCommands: Bool = false) {
        self.id = id
        self.version = version
        self.displayName = displayName
        self.summary = summary
        self.order = order
        self.scope = scope
        self.after = after
        self.before = before
        self.requiresFeatures = requiresFeatures
        self.requiresServices = requiresServices
        self.providesServices = providesServices
        self.commands = commands
        self.tools = tools
        self.concurrentCommands = concurrentCommands
    }
}

/// The scene an instance or callback concerns; mirrors `termhost_scene_info_t`.
public struct SceneInfo: Sendable {
    public var scene: UInt64
    public var workspace: UInt64
    public var hasTerminal: Bool

    init(_ raw: UnsafePointer<termhost_scene_info_t>?) {
        scene = raw?.pointee.scene ?? 0
        workspace = raw?.pointee.workspace ?? 0
        hasTerminal = (raw?.pointee.has_terminal ?? 0) != 0
    }
}

/// One run of a contributed command.
public struct CommandInvocation: Sendable {
    public var command: String
    public var arguments: [String]
    public var scene: UInt64
    public var stdinFD: Int32
    public var stdoutFD: Int32
    public var stderrFD: Int32
    public var jsonOutput: Bool

    /// Writes text to the scene's standard output.
    public func print(_ text: String, terminator: String = "\n") { write(stdoutFD, text + terminator) }
    /// Writes text to the scene's standard error.
    public func printError(_ text: String) { write(stderrFD, text + "\n") }

    private func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue } else { return } }
            bytes = bytes.dropFirst(n)
        }
    }
}

extension CommandInvocation {
    /// An invocation no client watches: what a command leaves running in the daemon after it
    /// returned (a background assistant run) uses it, in scene 0 (no terminal, no prompt, no
    /// Ctrl-C), with descriptors of its own.
    public init(detached command: String, arguments: [String], stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32) {
        self.command = command
        self.arguments = arguments
        self.scene = 0
        self.stdinFD = stdinFD
        self.stdoutFD = stdoutFD
        self.stderrFD = stderrFD
        self.jsonOutput = false
    }
}

/// An error a feature throws; its message reaches the user verbatim.
public struct PluginError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String

    public init(_ message: String, code: Int32 = Int32(TERMHOST_ERR_INTERNAL)) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A feature written in Swift. Implement `info` and `init`; every other method has a default.
/// All methods run on the host's lifecycle thread (`[main]`).
public protocol Feature: AnyObject {
    static var info: FeatureInfo { get }
    init(host: PluginHost, scene: SceneInfo) throws
    func activate() throws
    func sceneAttached(_ scene: SceneInfo)
    func sceneDetached(_ scene: SceneInfo)
    func background()
    func foreground()
    func expire()
    func shutdown()
    /// Returns the exit status: 0 success, 1 failure, 2 usage error.
    func run(_ command: CommandInvocation) -> Int32
    /// The vtable of a service listed in `providesServices`, or nil.
    func service(_ id: String) -> UnsafeRawPointer?
}

public extension Feature {
    func activate() throws {}
    func sceneAttached(_ scene: SceneInfo) {}
    func sceneDetached(_ scene: SceneInfo) {}
    func background() {}
    func foreground() {}
    func expire() {}
    func shutdown() {}
    func run(_ command: CommandInvocation) -> Int32 {
        command.printError("termhost: \(command.command): not implemented by \(Self.info.id)")
        return 1
    }
    func service(_ id: String) -> UnsafeRawPointer? { nil }
}

import Glibc
