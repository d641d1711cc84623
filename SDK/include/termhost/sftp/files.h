/* termhost/sftp/files.h: browsing and transfers over SFTP, offered by the SFTP plugin
 * (org.termhost.sftp). Declare "org.termhost.sftp.files/1" in requires_services and look it up
 * with host->get_service(host, TERMHOST_SFTP_FILES) once your feature is activated.
 *
 * Connections come from the SSH plugin's transport service: trust and authentication prompts
 * go to the scene you pass (scene 0, or one without a terminal, fails closed).
 * Text crossing this interface is UTF-8; listings and attributes are JSON (see Docs/ABI.md).
 * Threading: every call may be made from any thread and blocks until done. Calls on one
 * session run one at a time; transfers run on connections of their own. */
#ifndef TERMHOST_SFTP_FILES_H
#define TERMHOST_SFTP_FILES_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"
#include "../services/store.h"

#define TERMHOST_SFTP_FILES "org.termhost.sftp.files/1"

/* A browsing session: one SFTP connection, owned by the SFTP plugin until close(). The
 * pointer is an opaque handle (a generation token): one used after close() gets
 * TERMHOST_ERR_NOT_FOUND. */
typedef struct termhost_sftp_session termhost_sftp_session_t;

/* Transfer request flags. */
#define TERMHOST_SFTP_RECURSIVE 1u   /* directories, recursively (empty ones too; symlinks skipped) */
#define TERMHOST_SFTP_RESUME    2u   /* continue from a checkpoint after verifying the source */

/* When a target exists. */
typedef enum termhost_sftp_conflict {
   TERMHOST_SFTP_CONFLICT_FAIL = 0,       /* refuse before anything moves (the default) */
   TERMHOST_SFTP_CONFLICT_OVERWRITE = 1,  /* replace atomically (refused where impossible) */
   TERMHOST_SFTP_CONFLICT_SKIP = 2,
   TERMHOST_SFTP_CONFLICT_KEEP_BOTH = 3   /* the new file becomes "name (1).ext" */
} termhost_sftp_conflict_t;

typedef struct termhost_sftp_transfer {    /* filled by the caller, read during transfer() only */
   uint32_t struct_size;
   uint32_t upload;                        /* 0 download (remote -> local), 1 upload */
   const char *destination;                /* a saved host's name or "user@host[:port]" */
   const char *remote_path;                /* source of a download, target of an upload */
   const char *local_path;                 /* target of a download, source of an upload */
   uint32_t flags;                         /* TERMHOST_SFTP_RECURSIVE | TERMHOST_SFTP_RESUME */
   uint32_t conflict;                      /* termhost_sftp_conflict_t */
   uint64_t cookie;                        /* caller's nonzero name for stop(), or 0; one
                                              running transfer per cookie (a second one is
                                              refused with TERMHOST_ERR_INVALID_ARGUMENT) */
   /* Added in ABI 1.1 (read only when TERMHOST_HAS_FIELD(request, termhost_sftp_transfer_t,
    * bytes_per_second)): */
   uint64_t bytes_per_second;              /* bandwidth limit for the whole transfer; 0: none */
} termhost_sftp_transfer_t;

/* Progress of one file: bytes moved so far of total. path is borrowed for the call.
 * [called on a transfer worker thread] */
typedef void (*termhost_sftp_progress)(void *user, const char *path, uint64_t bytes, uint64_t total);

typedef struct termhost_sftp_files {   /* implemented by the SFTP plugin */
   uint32_t struct_size;

   /* Connects (see the SSH transport's open()) and starts SFTP. *out: owned by the SFTP
    * plugin until close(*out). Errors: TERMHOST_ERR_DENIED for refused trust or
    * credentials (or a server refusing the login directory), TERMHOST_ERR_INVALID_ARGUMENT
    * for a destination that is neither a saved host nor user@host[:port] or a server without
    * SFTP, TERMHOST_ERR_IO for network failures. [any-thread] */
   termhost_status (*open)(const termhost_host_t *caller, termhost_scene_id scene, const char *destination,
                           termhost_sftp_session_t **out, termhost_error_t *err);

   /* Disconnects and frees the session. NULL is ignored. [any-thread] */
   void (*close)(termhost_sftp_session_t *session);

   /* A directory's entries as a JSON array of objects {"name","type" ("file", "directory",
    * "symlink", "other"),"size","mode","mtime","uid","gid"} (null where the server sent
    * nothing), sorted by name, "." and ".." left out; delivered to sink once, valid during
    * the call. A path that is a file gives a one-element array. [any-thread] */
   termhost_status (*list)(termhost_sftp_session_t *session, const char *path,
                           termhost_value_sink sink, void *user, termhost_error_t *err);

   /* One path's attributes as a JSON object as in list(); follow != 0 follows a final
    * symbolic link. [any-thread] */
   termhost_status (*stat)(termhost_sftp_session_t *session, const char *path, int32_t follow,
                           termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Up to max_bytes of a file from offset, to sink once (fewer at the end of the file, none
    * past it). [any-thread] */
   termhost_status (*read)(termhost_sftp_session_t *session, const char *path, uint64_t offset,
                           uint64_t max_bytes, termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Directory and name changes; the server's reason comes back in err. rename() never
    * replaces an existing target. [any-thread] */
   termhost_status (*make_directory)(termhost_sftp_session_t *session, const char *path, termhost_error_t *err);
   termhost_status (*remove_file)(termhost_sftp_session_t *session, const char *path, termhost_error_t *err);
   termhost_status (*remove_directory)(termhost_sftp_session_t *session, const char *path, termhost_error_t *err);
   termhost_status (*rename)(termhost_sftp_session_t *session, const char *from, const char *to, termhost_error_t *err);

   /* Runs a transfer through the process's transfer queue, on connections of its own, and
    * returns when it has ended. progress (may be NULL) is called as bytes move. The summary
    * goes to summary_sink (may be NULL) as a JSON object {"files","done","skipped","paused",
    * "not_started","failed","cancelled","bytes","seconds","errors":[...]}.
    * Returns TERMHOST_OK when every file was done or skipped; TERMHOST_ERR_CANCELLED when it
    * was stopped; TERMHOST_ERR_IO when a file failed (its reason first in "errors", including
    * a refused resume check or atomic replace) or the connection was lost (paused files keep
    * their partial file and checkpoint: run again with TERMHOST_SFTP_RESUME);
    * TERMHOST_ERR_DENIED before anything moved, when trust, credentials or the conflict
    * policy refused; TERMHOST_ERR_INVALID_ARGUMENT for a conflict value out of range or a
    * cookie that already names a running transfer of this caller.
    * A relative local_path is taken from the host process's working directory.
    * The queue limits are the feature's settings (maxActive, maxPerHost). [any-thread; blocks] */
   termhost_status (*transfer)(const termhost_host_t *caller, termhost_scene_id scene,
                               const termhost_sftp_transfer_t *request,
                               termhost_sftp_progress progress, void *user,
                               termhost_value_sink summary_sink, void *summary_user, termhost_error_t *err);

   /* Stops the running transfer the caller started with this cookie: pause != 0 keeps the
    * partial files and checkpoints (resume later), pause == 0 cancels and removes them.
    * TERMHOST_ERR_NOT_FOUND when no such transfer runs. [any-thread] */
   termhost_status (*stop)(const termhost_host_t *caller, uint64_t cookie, int32_t pause, termhost_error_t *err);
} termhost_sftp_files_t;

#endif /* TERMHOST_SFTP_FILES_H */
