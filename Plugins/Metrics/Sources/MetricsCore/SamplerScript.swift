/// The loop that runs on the monitored host, on one exec channel for as long as the monitor
/// samples. Plain POSIX sh: it runs under dash, bash and BusyBox ash alike (no arrays, no
/// `read -t`, no fractional `sleep`, no `local`).
///
/// Cost per sample: one `head` for the six base files (head prints a "==> FILE <==" header
/// before each, which frames them for us, and `-n` bounds each read), one `head` for every
/// process's stat and statm and one `df` only while details are on, and `sleep`. Everything
/// else is a shell builtin. The page size, clock ticks and the `timeout` flavour are found
/// once, at start.
///
/// Markers: every marker line carries the caller's nonce (a random word per run, the third
/// argument), so remote text (a process named "x\n@@end NONCE" cannot know it) never ends or
/// starts a section. "@@base" ends the base part before the details, so a huge or broken
/// detail part cannot take the base metrics with it.
///
/// `df` (a hung NFS mount blocks it) and `nvidia-smi` run only under `timeout`: `timeout -k
/// 1 2` (GNU), `timeout 2` (newer BusyBox) or `timeout -t 2` (older BusyBox); without any,
/// they are skipped and the base metrics go on.
///
/// Ending: nothing reads stdin, so a subshell waits for end-of-file on it and then kills the
/// loop: the caller's shutdown(SHUT_WR) (or a closed channel) stops the remote side at once
/// instead of at its next write. sshd runs the command in a process group of its own, so the
/// watcher kills that whole group (`kill -9 0`: the shell, its `sleep`, a running `head` or
/// `df`), leaving nothing behind to hold the channel; when the loop is not a group leader (run
/// by hand, in tests) it kills only the loop's shell. SIGKILL, not SIGTERM: a shell started
/// with SIGTERM blocked (BusyBox ash keeps an inherited signal mask) would never see a TERM.
public enum SamplerScript {
    /// The loop's name in the remote process list ($0).
    public static let processName = "termhost-metrics-sampler"

    public static let body = """
    i=${1:-1}; d=${2:-0}; n=${3:-}
    case $i in ''|*[!0-9]*) i=1;; esac
    [ "$i" -ge 1 ] || i=1
    case $n in *[!0-9A-Za-z]*) n=;; esac
    m=${n:+ $n}
    p=$(getconf PAGESIZE 2>/dev/null)
    case $p in ''|*[!0-9]*) p=
    while read -r k v u; do
    if [ "$k" = KernelPageSize: ]; then case $v in ''|*[!0-9]*) ;; *) p=$((v * 1024)); break;; esac; fi
    done 2>/dev/null </proc/self/smaps;;
    esac
    case $p in ''|*[!0-9]*) p=4096;; esac
    t=$(getconf CLK_TCK 2>/dev/null); case $t in ''|*[!0-9]*) t=100;; esac
    T=
    if command -v timeout >/dev/null 2>&1; then
    if timeout -k 1 2 sleep 0 >/dev/null 2>&1; then T='timeout -k 1 2'
    elif timeout 2 sleep 0 >/dev/null 2>&1; then T='timeout 2'
    elif timeout -t 2 sleep 0 >/dev/null 2>&1; then T='timeout -t 2'; fi
    fi
    g=0
    if [ -n "$T" ] && command -v nvidia-smi >/dev/null 2>&1; then g=1; fi
    exec 3<&0
    (read x <&3; q=; read -r x x x x q x </proc/$$/stat; if [ "$q" = "$$" ]; then kill -9 0; else kill -9 $$; fi) 2>/dev/null &
    cd /proc || { echo "@@error$m no /proc"; exit 1; }
    echo "@@termhost-metrics 2 $p $t$m"
    echo @@phys /sys/class/net/*/device
    while :; do
    echo "@@sample$m"
    head -n 4096 uptime stat meminfo loadavg net/dev diskstats 2>/dev/null
    echo "@@blocks$m"; echo /sys/block/*
    echo "@@base$m"
    if [ "$d" = 1 ]; then
    if [ -n "$T" ]; then echo "@@df$m"; $T df -P -k 2>/dev/null; fi
    echo "@@procs$m"; head -n 1 [0-9]*/stat [0-9]*/statm 2>/dev/null
    fi
    if [ $g = 1 ]; then echo "@@gpu$m"; $T nvidia-smi -q -x 2>/dev/null; fi
    echo "@@end$m"
    sleep $i
    done
    """

    /// The exec command: `sh -c '<body>' termhost-metrics-sampler INTERVAL DETAILS NONCE`.
    /// The body has no single quote, so quoting it is just wrapping it.
    /// nonce: letters and digits only (anything else is dropped, and the markers lose it).
    public static func command(interval: Int, details: Bool, nonce: String) -> String {
        let quoted = "'" + body.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        let word = String(nonce.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        return "sh -c \(quoted) \(processName) \(max(1, interval)) \(details ? 1 : 0) \(word)"
    }

    /// A fresh random nonce for one run (16 hex digits).
    public static func newNonce() -> String {
        let v = UInt64.random(in: .min ... .max)
        let hex = String(v, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
