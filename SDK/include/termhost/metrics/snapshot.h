/* termhost/metrics/snapshot.h: read-only metrics snapshots, offered by the Metrics plugin
 * (org.termhost.metrics).
 *
 * Other plugins (the assistant's get_metrics tool, a status line) read what the process's
 * samplers already know. The service cannot add monitors, start or steer sampling, turn on
 * process collection or see anything about authentication: a host with no sampler running in
 * this process is TERMHOST_ERR_NOT_FOUND. Declare "org.termhost.metrics.snapshot/1" in
 * requires_services, add "org.termhost.metrics" to after (ABI.md: a required service does not
 * order features), and look it up with host->get_service(host, TERMHOST_METRICS_SNAPSHOT).
 *
 * Snapshot JSON (UTF-8, one object; Docs/Metrics.md lists every field):
 *   {"host":"web1","state":"live","reason":null,"now":"2026-11-29T14:31:58.250Z",
 *    "intervalSeconds":1,"samples":42,"sampleBytes":5120,
 *    "uptime":{"at":"...","ageSeconds":0.4,"stale":false,"seconds":8000.5},
 *    "cpu":{"at":...,"ageSeconds":...,"stale":...,"totalPercent":12.5,"cores":[{"core":0,"percent":null}]},
 *    "memory":{...}, "load":{...}, "network":{...}, "disks":{...},
 *    "filesystems":null, "processes":{..., "count":180, "top":[at most 20]}, "gpus":null}
 * state is one of connecting, collecting, live, paused, sleeping, failed (reason then says
 * why and what to do). A section is null until first collected; unknown and non-finite
 * values are null, never 0.
 *
 * Threading: every call may be made from any thread and returns at once (it copies what the
 * sampler holds; it never waits for the network). */
#ifndef TERMHOST_METRICS_SNAPSHOT_H
#define TERMHOST_METRICS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../services/store.h"

#define TERMHOST_METRICS_SNAPSHOT "org.termhost.metrics.snapshot/1"

typedef struct termhost_metrics_snapshot {   /* implemented by the Metrics plugin */
   uint32_t struct_size;

   /* Calls sink once with a JSON array of the host names that have a sampler in this process,
    * sorted by name (byte order of the UTF-8 names, not the monitor list's order; e.g.
    * ["db","web1"]; [] when none). data is UTF-8 JSON of exactly size bytes, NOT
    * NUL-terminated, valid during the sink call only (copy it to keep it). err may be NULL
    * (no message is written then); on failure *err (if given) holds the code and message.
    * [any-thread] */
   termhost_status (*list_hosts)(termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Calls sink once with the JSON snapshot of host (a monitor's host, as `termhost metrics
    * list` shows it). host: NUL-terminated UTF-8, borrowed for the call. data is UTF-8 JSON of
    * exactly size bytes, NOT NUL-terminated, valid during the sink call only. err may be NULL.
    * TERMHOST_ERR_NOT_FOUND (message names the host) when no sampler for it runs in this
    * process (sink is not called); TERMHOST_ERR_INVALID_ARGUMENT for a NULL host or sink.
    * A sampler that `termhost metrics show` started lingers 30 s after show returns, then
    * stops unless watch, serve or another show uses it. [any-thread] */
   termhost_status (*get_snapshot)(const char *host, termhost_value_sink sink, void *user, termhost_error_t *err);
} termhost_metrics_snapshot_t;

#endif /* TERMHOST_METRICS_SNAPSHOT_H */
