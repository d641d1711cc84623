/// The loop that runs on the monitored host, on one exec channel for as long as the monitor
/// samples. Plain POSIX sh: it runs under dash, bash and BusyBox ash alike (no arrays, no
/// `read -t`, no fractional `sleep`, no `local`).
///
/// Cost per sample: one `head` for the six base files (head prints a "==> FILE <==" header
/// before each, which frames them for us, and `-n` bounds each read), one `head` for every
/// process's stat and statm and one `df` only while details are on, and `sleep`. Everything
/// else is a shell builtin. The page size and clock ticks come once, at start.
///
/// Ending: nothing reads stdin, so a subshell waits for end-of-file on it and then kills the
/// loop: the caller's shutdown(SHUT_WR) (or a closed channel) stops the remote side at once
/// instead of at its next write. SIGKILL, not SIGTERM: a shell started with SIGTERM blocked
/// (BusyBox ash keeps an inherited signal mask) would never see a TERM.
public enum SamplerScript {
    /// The loop's name in the remote process list ($0).
    public static let processName = "termhost-metrics-sampler"

    public static let body = """
    i=${1:-1}; d=${2:-0}
    case $i in ''|*[!0-9]*) i=1;; esac
    [ "$i" -ge 1 ] || i=1
    p=$(getconf PAGESIZE 2>/dev/null); case $p in ''|*[!0-9]*) p=4096;; esac
    t=$(getconf CLK_TCK 2>/dev/null); case $t in ''|*[!0-9]*) t=100;; esac
    g=0
    if command -v nvidia-smi >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then g=1; fi
    exec 3<&0
    (read x <&3; kill -9 $$ 2>/dev/null) &
    cd /proc || { echo '@@error no /proc'; exit 1; }
    echo "@@termhost-metrics 1 $p $t"
    echo @@phys /sys/class/net/*/device
    while :; do
    echo @@sample
    head -n 4096 uptime stat meminfo loadavg net/dev diskstats 2>/dev/null
    if [ "$d" = 1 ]; then
    echo @@df; df -P -k 2>/dev/null
    echo @@procs; head -n 1 [0-9]*/stat [0-9]*/statm 2>/dev/null
    fi
    if [ $g = 1 ]; then echo @@gpu; timeout 2 nvidia-smi -q -x 2>/dev/null; fi
    echo @@end
    sleep $i
    done
    """

    /// The exec command: `sh -c '<body>' termhost-metrics-sampler INTERVAL DETAILS`.
    /// The body has no single quote, so quoting it is just wrapping it.
    public static func command(interval: Int, details: Bool) -> String {
        let quoted = "'" + body.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        return "sh -c \(quoted) \(processName) \(max(1, interval)) \(details ? 1 : 0)"
    }
}
