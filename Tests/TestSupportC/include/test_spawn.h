/* Starting test servers so that no process they start can escape the test that started them. */
#ifndef TERMHOST_TEST_SPAWN_H
#define TERMHOST_TEST_SPAWN_H

#include <sys/types.h>

/* Starts `path` with `argv` (NULL-terminated, argv[0] included) and the caller's environment in
 * a new process that is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, kept across exec): a
 * process below it whose parent ends (a remote command whose SSH session closed) becomes its
 * child instead of init's, so ending the server's process tree ends that command too.
 * stdin is /dev/null; stdout and stderr are appended to `log_path` (created 0644 if missing);
 * every other descriptor is closed, so the server holds no pipe of the test process.
 * Returns the new process's PID, or -1 with errno set (then nothing was started).
 * Threading: any thread; between fork and exec the child makes system calls only. */
pid_t termhost_test_spawn_subreaper(const char *path, char *const argv[], const char *log_path);

#endif
