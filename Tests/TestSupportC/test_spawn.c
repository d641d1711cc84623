#define _GNU_SOURCE
#include "test_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Closes every descriptor from `first` up: close_range(2) (Linux 5.9), else one by one. */
static void close_from(unsigned first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, ~0U, 0U) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = first; fd < max; fd++) close((int)fd);
}

/* The child's side: returns only on failure, with errno. */
static void become(const char *path, char *const argv[], const char *log_path) {
    int in = open("/dev/null", O_RDONLY);
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || log < 0 || dup2(in, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) return;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return;
    close_from(4);   /* 3 is the report pipe, closed by exec */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, environ);
}

pid_t termhost_test_spawn_subreaper(const char *path, char *const argv[], const char *log_path) {
    /* A pipe that closes on exec tells the parent whether exec succeeded, and errno if not. */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        /* The report pipe moves to 3 first, so the descriptors opened next land above it. */
        int out = report[1];
        if (report[1] == 3 || (dup2(report[1], 3) == 3 && fcntl(3, F_SETFD, FD_CLOEXEC) == 0)) {
            out = 3;
            become(path, argv, log_path);
        }
        int err = errno;
        ssize_t ignored = write(out, &err, sizeof err);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    int err = 0;
    ssize_t n;
    do { n = read(report[0], &err, sizeof err); } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == (ssize_t)sizeof err) {
        waitpid(pid, NULL, 0);
        errno = err;
        return -1;
    }
    return pid;
}
