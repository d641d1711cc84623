/* termhost/termhost.h: the Termhost plugin ABI, version 1. Includes only.
 * Reference: Docs/ABI.md. Start with entry.h, then host.h and feature.h. */
#ifndef TERMHOST_H
#define TERMHOST_H

#ifdef __cplusplus
extern "C" {
#endif

#include "version.h"
#include "error.h"
#include "host.h"
#include "entry.h"
#include "feature.h"
#include "action.h"
#include "services/log.h"
#include "services/config.h"
#include "services/store.h"
#include "services/secrets.h"
#include "services/interact.h"
#include "services/events.h"
#include "services/commands.h"
#include "services/tools.h"
#include "services/sync_store.h"
#include "services/environment.h"
#include "services/daemon.h"
#include "ssh/transport.h"
#include "ssh/sessions.h"
#include "sftp/files.h"
#include "metrics/snapshot.h"

#ifdef __cplusplus
}
#endif

#endif /* TERMHOST_H */
