/* termhost/services/daemon.h: whether this process is the daemon, and work that must run there.
 * Added in ABI 1.6.
 *
 * `termhost daemon` is the long-lived host process (Docs/Daemon.md): it keeps running when the
 * terminal closes, and the CLI sends plugins' commands to it when it runs. Some work only makes
 * sense there: a forwarding rule that should keep running, a transfer that should outlive the
 * terminal. A feature asks here whether it runs in the daemon (to restore such work when the
 * daemon starts), and a command that must run there says so with require(): in the CLI the
 * host then starts the daemon and runs the command again inside it. */
#ifndef TERMHOST_SERVICE_DAEMON_H
#define TERMHOST_SERVICE_DAEMON_H

#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"

#define TERMHOST_SERVICE_DAEMON "termhost.daemon/1"

typedef struct termhost_host_daemon { /* implemented by the host. Added in ABI 1.6. */
   uint32_t struct_size;

   /* 1 when this process is the daemon (`termhost daemon run`), 0 in the CLI, a test harness
    * or the load-time probe. Fixed for the life of the process. [any-thread] */
   int32_t (*is_daemon)(const termhost_host_t *host);

   /* Says that the command running in scene must run in the daemon. Call it from run_command()
    * before the command does anything.
    * In the daemon: TERMHOST_OK, *host_reruns = 0; go on.
    * Elsewhere: TERMHOST_ERR_UNSUPPORTED. *host_reruns = 1 when the host takes it from here:
    * the command is the one the user typed, and once it returns the CLI starts the daemon if
    * none runs (or, with --no-autostart, says how) and runs the same command line there, whose
    * output and exit status become the user's. Return at once and print nothing then: anything
    * printed would come before the daemon's run. *host_reruns = 0 when it cannot (the command
    * was run through termhost.commands/1, or the user asked for --in-process): err says why;
    * show it and fail. host_reruns must not be NULL. [main] */
   termhost_status (*require)(const termhost_host_t *host, termhost_scene_id scene, int32_t *host_reruns,
                              termhost_error_t *err);
} termhost_host_daemon_t;

#endif
