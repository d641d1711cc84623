import Synchronization

/// The calls a `ToolProviding` feature is running, by call ID, each with its cancel flag, so
/// `cancelTool(callID:)` reaches the call it names from any thread. [thread-safe]
public final class ToolCalls: Sendable {
    private let running = Mutex<[UInt64: ExecCancel]>([:])

    public init() {}

    /// Runs `body` with a flag that `cancel(callID)` sets while it runs (pass it to
    /// `Connection.exec(_:deadline:cancel:)`, or poll `isCancelled` between steps).
    public func run<R>(_ callID: UInt64, _ body: (ExecCancel) throws(PluginError) -> R) throws(PluginError) -> R {
        let flag = ExecCancel()
        running.withLock { $0[callID] = flag }
        defer { _ = running.withLock { $0.removeValue(forKey: callID) } }
        return try body(flag)
    }

    /// Sets the flag of the running call `callID`; unknown or finished IDs are ignored
    /// (tools.h). Never waits.
    public func cancel(_ callID: UInt64) {
        running.withLock { $0[callID] }?.cancel()
    }
}

/// Output kept up to a byte bound, counting what did not fit, so a tool can say truthfully
/// how much it left out.
public struct BoundedOutput: Sendable {
    public let limit: Int
    public private(set) var bytes: [UInt8] = []
    /// Bytes received beyond `limit`.
    public private(set) var omitted = 0

    public init(limit: Int) { self.limit = max(0, limit) }

    public mutating func append(_ data: UnsafeRawBufferPointer) {
        let room = min(limit - bytes.count, data.count)
        if room > 0 { bytes.append(contentsOf: data.prefix(room)) }
        omitted += data.count - max(room, 0)
    }

    /// The kept bytes as text: cut back to the last whole UTF-8 character (the cut bytes count
    /// as omitted), invalid sequences as U+FFFD.
    public var text: String { String(decoding: bytes.prefix(bytes.count - partialTail), as: UTF8.self) }
    /// Omitted bytes, including a character cut in half at the bound.
    public var omittedBytes: Int { omitted + partialTail }

    /// Bytes of an incomplete character at the end of `bytes`, when output was cut there.
    private var partialTail: Int {
        guard omitted > 0 else { return 0 }
        var i = bytes.count
        var back = 0
        while i > 0 && back < 4 && bytes[i - 1] & 0xC0 == 0x80 { i -= 1; back += 1 }
        guard i > 0 else { return 0 }
        let lead = bytes[i - 1]
        let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        return length > back + 1 ? back + 1 : 0
    }
}

extension ExecCancel {
    /// The flag itself, for a provider that polls it in C-shaped code (the SSH plugin's own
    /// exec loop); valid while this value lives.
    public var pointer: UnsafePointer<Int32> { UnsafePointer(flag) }
}
