import CTermhost

extension SSHTransport {
    /// Whether the SSH plugin offers `open_saved` (ABI 1.3). [any-thread]
    public var offersOpenSaved: Bool { TermhostStruct.member(vtable, \.open_saved) != nil }

    /// `open_saved`: connects to the saved host `name` without ever prompting, for work no
    /// person watches (tools). The error is TERMHOST_ERR_INVALID_ARGUMENT for a name that is
    /// not a saved host, TERMHOST_ERR_DENIED for trust or credentials (its message says what the
    /// user should run), TERMHOST_ERR_IO for the network; TERMHOST_ERR_UNSUPPORTED against an
    /// SSH plugin older than 1.3. [any-thread]
    /// `shared`: as `open(_:scene:shared:)`.
    public func openSaved(_ name: String, shared: Bool = false) throws(PluginError) -> Connection {
        guard let openSaved = TermhostStruct.member(vtable, \.open_saved) else {
            throw PluginError("ssh: the SSH plugin predates ABI 1.3: it cannot connect to a saved host without prompting",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        var handle: OpaquePointer?
        if shared, let openWith = TermhostStruct.member(vtable, \.open_with) {
            try check { openWith(host, 0, name, UInt32(TERMHOST_SSH_OPEN_SAVED | TERMHOST_SSH_OPEN_SHARED), &handle, $0) }
        } else {
            try check { openSaved(host, name, &handle, $0) }
        }
        return Connection(vtable: vtable, handle: handle)
    }
}
