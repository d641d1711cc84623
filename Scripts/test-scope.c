/* test-scope: runs a command (the test suite) as a scope that nothing it starts can leave.
 *
 *   test-scope COMMAND [ARG...]
 *
 * Why: test servers and terminals daemonise (tmux's server forks twice; sshd's and Dropbear's
 * per-connection processes call setsid), so neither the process group nor the parent of what a
 * test started leads back to the suite once the process that started it has gone. A child
 * subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4) becomes the parent of every orphan below
 * it instead of init, so after the command ends, every process still running that the suite
 * started, however it detached, is a descendant of this one. It needs no privilege, unlike a PID
 * namespace or a cgroup.
 *
 * What it does: runs COMMAND, reaping orphans while it runs; when COMMAND ends, gives what is
 * still ending two seconds, then lists every descendant still alive (PID, parent, seconds
 * running, command line with control characters shown as \ooo), kills each (SIGKILL) and reaps
 * it. Exit status: COMMAND's own when nothing outlived it; 125 when something did (even if
 * COMMAND passed); 126/127 when COMMAND could not be started.
 *
 * Built by Scripts/test.sh with cc; C99 plus Linux's prctl and /proc.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 32768

struct proc {
    pid_t pid;
    pid_t parent;
    unsigned long long start; /* clock ticks after boot, /proc/PID/stat field 22 */
};

/* Reads PID's parent and start time; 0 on success. Zombies count as gone (-1). */
static int read_stat(pid_t pid, struct proc *out) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* COMM may hold spaces and ')': fields are counted from the last ')'. */
    char *close = strrchr(buf, ')');
    if (!close) return -1;
    char state = 0;
    int parent = 0;
    unsigned long long start = 0;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
       cstime priority nice threads itrealvalue starttime */
    if (sscanf(close + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &state, &parent, &start) != 3)
        return -1;
    if (state == 'Z' || state == 'X') return -1;
    out->pid = pid;
    out->parent = (pid_t)parent;
    out->start = start;
    return 0;
}

/* Every live descendant of this process into `found`; returns how many. */
static size_t descendants(struct proc *found, size_t capacity) {
    static struct proc all[MAX_PROCS];
    size_t count = 0;
    DIR *dir = opendir("/proc");
    if (!dir) return 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) && count < MAX_PROCS) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        if (read_stat((pid_t)pid, &all[count]) == 0) count++;
    }
    closedir(dir);
    size_t n = 0;
    pid_t self = getpid();
    /* Breadth-first from this process: `found` is also the queue. */
    for (size_t i = 0; i < count && n < capacity; i++)
        if (all[i].parent == self) found[n++] = all[i];
    for (size_t head = 0; head < n; head++)
        for (size_t i = 0; i < count && n < capacity; i++)
            if (all[i].parent == found[head].pid) found[n++] = all[i];
    return n;
}

static void reap_all(void) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
}

/* The command line of PID with every byte that is not printable ASCII shown as \ooo and the
   argument separators as spaces, so that nothing a leftover process holds reaches the terminal
   raw. */
static void print_command(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) { fputs("?", stderr); return; }
    int c, separator = 0;
    size_t shown = 0;
    while ((c = fgetc(f)) != EOF && shown < 400) {
        if (c == 0) { separator = 1; continue; }
        if (separator) { fputc(' ', stderr); separator = 0; }
        if (c >= 0x20 && c < 0x7f && c != '\\') fputc(c, stderr);
        else fprintf(stderr, "\\%03o", c);
        shown++;
    }
    fclose(f);
}

static double seconds_running(const struct proc *p) {
    double ticks = (double)sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/uptime", "r");
    double uptime = 0;
    if (f) { if (fscanf(f, "%lf", &uptime) != 1) uptime = 0; fclose(f); }
    double running = uptime - (double)p->start / ticks;
    return running < 0 ? 0 : running;
}

static void sleep_ms(long ms) {
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) == -1 && errno == EINTR) {}
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test-scope COMMAND [ARG...]\n");
        return 126;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        perror("test-scope: prctl(PR_SET_CHILD_SUBREAPER)");
        return 126;
    }
    pid_t child = fork();
    if (child < 0) { perror("test-scope: fork"); return 126; }
    if (child == 0) {
        execvp(argv[1], argv + 1);
        fprintf(stderr, "test-scope: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    /* Ctrl-C at the terminal reaches the whole foreground group, the command included; this
       process stays to clean up after it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    int status = 0;
    for (;;) {
        int s;
        pid_t done = waitpid(-1, &s, 0);
        if (done == child) { status = s; break; }
        if (done < 0 && errno != EINTR) { perror("test-scope: waitpid"); return 126; }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    static struct proc left[MAX_PROCS];
    size_t n = 0;
    for (int i = 0; i < 100; i++) { /* two seconds for what is already ending */
        reap_all();
        n = descendants(left, MAX_PROCS);
        if (n == 0) break;
        sleep_ms(20);
    }
    if (n == 0) return code;

    fprintf(stderr, "test-scope: %zu process(es) outlived the tests:\n", n);
    fprintf(stderr, "%8s %8s %9s  %s\n", "PID", "PARENT", "SECONDS", "COMMAND");
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "%8d %8d %9.1f  ", (int)left[i].pid, (int)left[i].parent, seconds_running(&left[i]));
        print_command(left[i].pid);
        fputc('\n', stderr);
    }
    /* Stop them all first so none forks again, then kill; each only if its PID still names
       the process listed (same start time), never a newcomer that took a freed PID. */
    struct proc now;
    for (size_t i = 0; i < n; i++)
        if (read_stat(left[i].pid, &now) == 0 && now.start == left[i].start) kill(left[i].pid, SIGSTOP);
    for (size_t i = 0; i < n; i++)
        if (read_stat(left[i].pid, &now) == 0 && now.start == left[i].start) kill(left[i].pid, SIGKILL);
    for (int i = 0; i < 250; i++) {
        reap_all();
        if (descendants(left, MAX_PROCS) == 0) break;
        sleep_ms(20);
    }
    fprintf(stderr, "test-scope: killed them; the run fails (status 125)\n");
    return 125;
}
