/* termhost/services/sync_store.h: what a sync provider reads and writes in other plugins' store
 * namespaces. Added in ABI 1.3.
 *
 * Plugins mark collections syncable with termhost_host_store_t.declare_syncable (store.h).
 * Only the plugin the operator names as the sync provider (by default org.termhost.sync; see
 * Docs/Sync.md) may use this table: for any other plugin every call returns TERMHOST_ERR_DENIED
 * with the setting to change. Only declared collections are reachable, never a plugin's other
 * collections, and the secrets service is not behind it at all: a value saved with
 * termhost_host_secrets_t cannot pass through here, whatever a plugin declares.
 *
 * Rationale: one table with a fixed reader instead of a flag on termhost.store/1, so that what a
 * sync provider can see is written in one place and checked on every call. */
#ifndef TERMHOST_SERVICE_SYNC_STORE_H
#define TERMHOST_SERVICE_SYNC_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "store.h"

#define TERMHOST_SERVICE_SYNC_STORE "termhost.sync-store/1"

/* The event published (services/events.h) before a remote version of a record is applied, so
 * that the owning plugin retires runtime state built from the old one (connections to a host
 * whose route changed, forwards of a replaced rule). Payload: JSON
 * {"namespace":...,"collection":...,"key":...,"deleted":true|false}. Delivered synchronously,
 * on the applying thread, before the write. */
#define TERMHOST_EVENT_SYNC_APPLYING "termhost.sync.applying"

/* Receives one syncable collection. namespace_, collection, local_fields: borrowed for the call;
 * local_fields is a comma-separated list of top-level JSON fields that never leave the device
 * ("" for none). merge: a termhost_sync_merge value. Return 0 to continue. */
typedef int32_t (*termhost_syncable_visitor)(void *user, const char *namespace_, const char *collection,
                                             int32_t merge, const char *local_fields);

typedef struct termhost_host_sync_store {   /* implemented by the host */
   uint32_t struct_size;

   /* Visits every collection declared syncable so far in this process, ordered by namespace
    * then collection. [any-thread] */
   termhost_status (*collections)(const termhost_host_t *host, termhost_syncable_visitor visitor,
                                  void *user, termhost_error_t *err);

   /* Visits journal rows with sequence > after that belong to syncable collections, oldest
    * first (rows of other collections are skipped, not shown). [any-thread] */
   termhost_status (*journal_since)(const termhost_host_t *host, int64_t after,
                                    termhost_journal_visitor visitor, void *user, termhost_error_t *err);

   /* Calls sink with the record's value. TERMHOST_ERR_NOT_FOUND when absent,
    * TERMHOST_ERR_DENIED when the collection is not syncable. [any-thread] */
   termhost_status (*get)(const termhost_host_t *host, const char *namespace_, const char *collection,
                          const char *key, termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Visits a syncable collection's entries in key order. [any-thread] */
   termhost_status (*list)(const termhost_host_t *host, const char *namespace_, const char *collection,
                           termhost_entry_visitor visitor, void *user, termhost_error_t *err);

   /* Applies a remote version: publishes TERMHOST_EVENT_SYNC_APPLYING, then stores value (size
    * bytes, copied), or deletes the record when value is NULL (absent is not an error). The
    * write is journaled like the owner's own. TERMHOST_ERR_DENIED when the collection is not
    * syncable. [any-thread] */
   termhost_status (*apply)(const termhost_host_t *host, const char *namespace_, const char *collection,
                            const char *key, const void *value, size_t size, termhost_error_t *err);

   /* Added in ABI 1.4. Runs the owning plugin's check (store.h, declare_sync_check) on a
    * version of a record another device wrote: value, size bytes, borrowed. TERMHOST_OK when it
    * accepts or the owner named no check; TERMHOST_ERR_INVALID_ARGUMENT with the owner's reason
    * when it refuses ("port: 70000 is not from 1 to 65535"); TERMHOST_ERR_DENIED when the
    * collection is not syncable. Call it before apply for every incoming version, and keep a
    * refused one out of the store. [any-thread] */
   termhost_status (*check)(const termhost_host_t *host, const char *namespace_, const char *collection,
                            const char *key, const void *value, size_t size, termhost_error_t *err);
} termhost_host_sync_store_t;

#endif
