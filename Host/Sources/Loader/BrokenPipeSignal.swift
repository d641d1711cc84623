import Glibc

/// A write to a socket or pipe whose reader is gone fails with EPIPE; it never ends the process.
///
/// Plugins write to descriptors whose other ends can close at any moment: a jump host's tunnel
/// while the session inside it closes, a forwarded client that hung up, a bridge whose caller
/// closed its end. Unix's default for such a write is SIGPIPE, which would end the whole host,
/// every feature with it, for one peer's departure (seen in CI: a download through a jump host
/// finished, then the tunnel's last write killed the process). OpenSSH's ssh ignores SIGPIPE
/// for the same reason. With it ignored the write returns EPIPE, and the code that made it
/// handles a closed peer as the error it is. Set before any plugin code runs; a program the
/// host starts inherits it (the probe, which loads plugins the same way).
public enum BrokenPipeSignal {
    public static func ignore() {
        signal(SIGPIPE, SIG_IGN)
    }
}
