/* libpq, PostgreSQL's C client (Debian's libpq-dev), for the Sync plugin's PostgreSQL backend.
 * Debian installs the headers under /usr/include/postgresql; libpq-fe.h finds its siblings
 * (postgres_ext.h) relative to itself, so no extra include path is needed. */
#ifndef TERMHOST_CLIBPQ_SHIM_H
#define TERMHOST_CLIBPQ_SHIM_H
#include <postgresql/libpq-fe.h>
#endif
