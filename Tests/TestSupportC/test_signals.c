/* The test process survives a write to a pipe whose reader has gone.
 *
 * Tests write to the stdin of programs they start (Process pipes, FileHandle writes: over a
 * hundred places), and a program that exits before reading all of it leaves the writer with
 * SIGPIPE, whose default action ends the whole test process: every test still running is lost
 * (seen once under load: the runner died with signal 13 in the middle of the suite). SIGPIPE is
 * caught here by a handler that does nothing, so the write fails with EPIPE and only its test
 * can notice. A handler, not SIG_IGN: an ignored signal stays ignored in every program the
 * tests exec (termhost, sshd, shells), while a caught one is reset to its default by exec, so
 * the programs under test see SIGPIPE as they would anywhere else.
 *
 * Installed when the test bundle is loaded (a constructor), before any test runs. */
#include <signal.h>
#include <string.h>

static void ignore_pipe_signal(int signo) { (void)signo; }

__attribute__((constructor)) static void catch_sigpipe(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = ignore_pipe_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGPIPE, &action, NULL);
}
