/* termhost/services/store.h: the host's SQLite-backed store.
 *
 * Values live in collections inside the calling plugin's namespace, so two plugins never see
 * each other's keys. Every put and delete appends a row to the change journal (sequence,
 * namespace, collection, key, operation); deletes are kept there as tombstones so that a sync
 * feature can replicate them. Values are opaque bytes (JSON recommended). Never put a secret
 * here: use the secrets service and store its ID. */
#ifndef TERMHOST_SERVICE_STORE_H
#define TERMHOST_SERVICE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"

#define TERMHOST_SERVICE_STORE "termhost.store/1"

/* Receives a value. data: owned by the host, valid only during the call. */
typedef void (*termhost_value_sink)(void *user, const void *data, size_t size);

/* Receives one entry of a listing. key and value are borrowed for the call.
 * Return 0 to continue, non-zero to stop early. */
typedef int32_t (*termhost_entry_visitor)(void *user, const char *key, const void *value,
                                          size_t size);

/* Receives one journal row. namespace_, collection, key: borrowed for the call.
 * operation: "put" or "delete". Return 0 to continue, non-zero to stop. */
typedef int32_t (*termhost_journal_visitor)(void *user, int64_t sequence, const char *namespace_,
                                            const char *collection, const char *key,
                                            const char *operation);

/* How a syncable collection merges (declare_syncable). Added in ABI 1.3. */
typedef enum termhost_sync_merge {
   /* The whole record: the write the vault ordered last wins; an edit made on another device
    * without seeing it is a conflict the user resolves. */
   TERMHOST_SYNC_MERGE_RECORD = 1,
   /* Values are JSON objects merged field by field against the last synced copy: edits of
    * different fields both survive; one field edited on both sides is a conflict. */
   TERMHOST_SYNC_MERGE_FIELDS = 2
} termhost_sync_merge;

/* Added in ABI 1.4. Checks one record of a syncable collection that another device wrote, before
 * the sync provider applies it (declare_sync_check). collection and key: UTF-8, borrowed; value:
 * size bytes (at most 1 MiB), borrowed, not NUL-terminated. Return 0 to accept. To refuse, write
 * the rule that failed (one line of UTF-8, e.g. "port: 70000 is not from 1 to 65535") into reason,
 * which has room for reason_size bytes including the NUL (longer text is cut), and return
 * non-zero. Check what `add` would check; the record may be anything a peer chose to write.
 * [any-thread, concurrent] It must not call the host back: it runs inside the sync provider's
 * store calls. */
typedef int32_t (*termhost_sync_check)(void *user, const char *collection, const char *key,
                                       const void *value, size_t size, char *reason, size_t reason_size);

/* The work of one transaction; return TERMHOST_OK to commit, anything else rolls back. */
typedef termhost_status (*termhost_transaction_body)(void *user, termhost_error_t *err);

typedef struct termhost_host_store {   /* implemented by the host */
   uint32_t struct_size;

   /* Stores value under (collection, key), replacing any previous value.
    * collection, key: UTF-8, borrowed. value: size bytes, copied. [any-thread] */
   termhost_status (*put)(const termhost_host_t *host, const char *collection, const char *key,
                          const void *value, size_t size, termhost_error_t *err);

   /* Calls sink once with the value. TERMHOST_ERR_NOT_FOUND when absent. [any-thread] */
   termhost_status (*get)(const termhost_host_t *host, const char *collection, const char *key,
                          termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Removes the key and journals a tombstone. TERMHOST_ERR_NOT_FOUND when absent. [any-thread] */
   termhost_status (*remove)(const termhost_host_t *host, const char *collection,
                             const char *key, termhost_error_t *err);

   /* Visits the collection's entries whose key starts with prefix (NULL or "" for all), in
    * key order. [any-thread] */
   termhost_status (*list)(const termhost_host_t *host, const char *collection,
                           const char *prefix, termhost_entry_visitor visitor, void *user,
                           termhost_error_t *err);

   /* Runs body inside one SQLite transaction. Store calls that body makes on the same thread
    * join the transaction; other threads wait until it ends. Nested calls join the outer one.
    * [any-thread] */
   termhost_status (*transaction)(const termhost_host_t *host, termhost_transaction_body body,
                                  void *user, termhost_error_t *err);

   /* Visits journal rows with sequence > after, oldest first; since 1.3: rows of the calling
    * plugin's namespace only (1.0 to 1.2 listed every namespace's keys). The sync provider reads
    * other plugins' syncable rows through termhost.sync-store/1's journal_since.
    * [any-thread] */
   termhost_status (*journal_since)(const termhost_host_t *host, int64_t after,
                                    termhost_journal_visitor visitor, void *user,
                                    termhost_error_t *err);

   /* Added in ABI 1.3. Marks collection (in the calling plugin's namespace) syncable: the sync
    * provider (services/sync_store.h) may read its records and journal and apply other
    * devices' versions. merge: a termhost_sync_merge value. local_fields: comma-separated
    * top-level JSON fields that stay on this device (e.g. "last_used"), NULL or "" for none;
    * TERMHOST_SYNC_MERGE_FIELDS is required when there are any. Declare in init(); a
    * declaration lasts for the process. Never declare a collection holding anything secret:
    * keep secrets in the secrets service, which never syncs. [main & !started] */
   termhost_status (*declare_syncable)(const termhost_host_t *host, const char *collection,
                                       int32_t merge, const char *local_fields, termhost_error_t *err);

   /* Added in ABI 1.4. Names the check (termhost_sync_check above) that another device's
    * version of a record in collection (in the calling plugin's namespace, declared syncable
    * first) must pass before it is applied; the sync provider quarantines a refused version
    * with the reason, and it never reaches this plugin's store. user is passed back to check
    * and must stay valid for the process. A second call replaces the first. Without a check,
    * only the sync provider's own limits apply (size, key). TERMHOST_ERR_INVALID_ARGUMENT
    * when check is NULL or the collection was not declared syncable. [main & !started] */
   termhost_status (*declare_sync_check)(const termhost_host_t *host, const char *collection,
                                         termhost_sync_check check, void *user, termhost_error_t *err);
} termhost_host_store_t;

#endif
