/// What the daemon's owner does as persistent sessions come and go: DaemonCommand gives each
/// session a scene of the host's lifecycle, in background while no client is attached and
/// active while one is, discarded when the session ends, so the process phase follows the
/// sessions as it follows any front end's scenes (Docs/Architecture.md, lifecycle model).
public struct SessionSceneHooks: Sendable {
    /// A session the daemon had not seen: opened, or restored from a previous daemon.
    public let opened: @Sendable (_ session: String) -> Void
    /// How many of this daemon's clients are attached to it now.
    public let clients: @Sendable (_ session: String, _ count: Int) -> Void
    /// The session ended (its shell exited, it was killed).
    public let ended: @Sendable (_ session: String) -> Void

    public init(opened: @escaping @Sendable (String) -> Void, clients: @escaping @Sendable (String, Int) -> Void,
                ended: @escaping @Sendable (String) -> Void) {
        self.opened = opened
        self.clients = clients
        self.ended = ended
    }
}
