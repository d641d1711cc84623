import Glibc

/// A write to a socket or pipe whose reader is gone fails with EPIPE; it never ends the process.
///
/// Plugins write to descriptors whose other ends can close at any moment: a jump host's tunnel
/// while the session inside it closes, a forwarded client that hung up, a bridge whose caller
/// closed its end. Unix's default for such a write is SIGPIPE, which would end the whole host,
/// every feature with it, for one peer's departure (seen in CI: a download through a jump host
/// finished, then the tunnel's last write killed the process). OpenSSH's ssh ignores SIGPIPE
/// for the same reason. With it handled the write returns EPIPE, and the code that made it
/// handles a closed peer as the error it is. Set before any plugin code runs.
///
/// A handler that does nothing, not SIG_IGN: an ignored signal stays ignored in every program
/// the process execs (a ProxyCommand, a local command, the probe's own children), where
/// `yes | head` would then never end; a caught one is reset to its default by exec, as
/// OpenSSH resets SIGPIPE in its ProxyCommand child. For this process the effect is the same.
public enum BrokenPipeSignal {
    public static func ignore() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGPIPE, &action, nil)
    }
}
