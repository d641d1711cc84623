/* termhost/services/environment.h: the environment of the user who asked for a scene's work.
 * Added in ABI 1.6.
 *
 * In the CLI a command runs in the `termhost` process the user started, and getenv() reads the
 * user's environment. In the daemon it does not: the daemon was started earlier (by systemd, or
 * by another terminal), and its environment is its own, so getenv() there reads the wrong TERM,
 * the wrong SSH_AUTH_SOCK, and none of the variables the user exported in this shell. Each
 * `termhost` client sends its environment with the command it asks the daemon to run, and this
 * service answers with it for the command's scene. Read the user's variables through it
 * (TERM, SSH_AUTH_SOCK, LANG, a variable named on the command line); keep getenv() for the
 * process's own settings (XDG directories, TERMHOST_* limits), which are the daemon's.
 *
 * The values are untrusted input like any other: the client is the same user (the daemon lets
 * in only its own uid), but a variable can hold anything a shell can export. */
#ifndef TERMHOST_SERVICE_ENVIRONMENT_H
#define TERMHOST_SERVICE_ENVIRONMENT_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"

#define TERMHOST_SERVICE_ENVIRONMENT "termhost.environment/1"

typedef struct termhost_host_environment { /* implemented by the host. Added in ABI 1.6. */
   uint32_t struct_size;

   /* Copies the value of variable `name` in the environment of the client that scene belongs
    * to into buf (NUL-terminated). Scene 0, and a scene whose front end is this process (the
    * CLI), read the process's environment, as getenv() would.
    * name: borrowed, a variable name (letters, digits, '_', not starting with a digit; at most
    * 256 bytes).
    * buf: owned by the caller, buf_size bytes.
    * Returns TERMHOST_OK; TERMHOST_ERR_NOT_FOUND when the variable is not set there (an empty
    * value is set, and copies as ""); TERMHOST_ERR_TOO_LARGE when buf is too small (*needed,
    * if not NULL, gets the size with the NUL); TERMHOST_ERR_INVALID_ARGUMENT for a NULL or
    * malformed name. A scene that has ended reads as the process's environment. [any-thread] */
   termhost_status (*get_variable)(const termhost_host_t *host, termhost_scene_id scene,
                                   const char *name, char *buf, size_t buf_size, size_t *needed,
                                   termhost_error_t *err);

   /* Added in ABI 1.7 (check with TERMHOST_HAS_FIELD): copies the names of every variable set
    * in the environment of the client that scene belongs to (scene 0 and the CLI's scene: the
    * process's) into buf, each followed by a NUL, in no set order; an empty environment copies
    * nothing. For matching patterns against the user's variables (ssh's SendEnv LANG LC_*),
    * where get_variable alone would need the names in advance. Names that are not shell
    * identifiers are left out (get_variable could not read them).
    * host: the caller's, not NULL. buf: owned by the caller, buf_size bytes; may be NULL when
    * buf_size is 0. written: not NULL; set to the bytes copied, 0 on any failure. needed: may be
    * NULL; set to the bytes all the names take. err: may be NULL.
    * Returns TERMHOST_OK; TERMHOST_ERR_TOO_LARGE when buf is too small (nothing is copied then:
    * grow it to *needed and call again; a daemon client's environment does not change while
    * its scene lives, the process's may, so loop until it fits); TERMHOST_ERR_INVALID_ARGUMENT
    * for a NULL host or written. [any-thread] */
   termhost_status (*list_names)(const termhost_host_t *host, termhost_scene_id scene,
                                 char *buf, size_t buf_size, size_t *written, size_t *needed,
                                 termhost_error_t *err);
} termhost_host_environment_t;

#endif
