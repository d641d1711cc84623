/* termhost/services/secrets.h: secret values kept apart from the store.
 *
 * Secrets live in their own file with mode 0600 under $XDG_DATA_HOME/termhost/, never in the
 * SQLite store, the journal, logs or diagnostics. The store keeps only the ID. Secrets are
 * namespaced per plugin like the store. */
#ifndef TERMHOST_SERVICE_SECRETS_H
#define TERMHOST_SERVICE_SECRETS_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "store.h"

#define TERMHOST_SERVICE_SECRETS "termhost.secrets/1"

/* Bytes needed for a secret ID, NUL included. */
#define TERMHOST_SECRET_ID_SIZE 64

typedef struct termhost_host_secrets { /* implemented by the host */
   uint32_t struct_size;

   /* Saves a new secret and writes its ID (NUL-terminated) into out_id, which the caller owns
    * (TERMHOST_SECRET_ID_SIZE bytes). value: size bytes, copied; the caller should wipe its copy.
    * [any-thread] */
   termhost_status (*put)(const termhost_host_t *host, const void *value, size_t size,
                          char out_id[TERMHOST_SECRET_ID_SIZE], termhost_error_t *err);

   /* Calls sink once with the secret; the bytes are wiped after sink returns, so copy what you
    * need. TERMHOST_ERR_NOT_FOUND when the ID is unknown. [any-thread] */
   termhost_status (*get)(const termhost_host_t *host, const char *id, termhost_value_sink sink,
                          void *user, termhost_error_t *err);

   /* Deletes the secret. TERMHOST_ERR_NOT_FOUND when the ID is unknown. [any-thread] */
   termhost_status (*remove)(const termhost_host_t *host, const char *id, termhost_error_t *err);
} termhost_host_secrets_t;

#endif
