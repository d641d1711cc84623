/* AES-CTR for libssh2 with the keystream made in bulk.
 *
 * Why: libssh2 (1.10, and 1.11.1 still for AES-CTR) encrypts and decrypts one 16-byte block
 * per EVP_Cipher call, and OpenSSL's CTR path costs far more per such call than per byte in
 * bulk. Counted with valgrind on a 16 MiB SFTP download, libssh2 1.11.1 made 1,054,103
 * EVP_Cipher calls (16.0 bytes each).
 *
 * How: a small OpenSSL 3 provider, "termhost", offers AES-128/192/256-CTR. Each context
 * enciphers 256 counter blocks at a time with the default provider's AES-ECB and XORs data
 * with that keystream: the same bytes as OpenSSL's CTR, made in bulk. Its state is OpenSSL's
 * (running IV, num, re-keying without a new IV), so OpenSSL's own CTR-DRBG gets what it got
 * before. libssh2 picks it up through OpenSSL's ordinary implicit fetch: nothing of libssh2 is
 * patched or interposed.
 *
 * Confined: the provider lives in a library context of its own (with OpenSSL's default
 * provider, and a default property query that prefers this one), never in the process's
 * default one. A thread uses it only between termhost_batched_ctr_enter() and _leave(),
 * which make it that thread's default library context (OSSL_LIB_CTX_set0_default): the SSH
 * plugin brackets its libssh2 work with them, so the cipher contexts libssh2 makes at each key
 * exchange come from here, and every other OpenSSL user in the process, on any other thread
 * or outside those brackets, gets exactly what it would without this file. */
#ifndef TERMHOST_BATCHED_CTR_H
#define TERMHOST_BATCHED_CTR_H

#include <stddef.h>

/* Makes the library context (once; later calls return 1 at once). Returns 1 when enabled; 0
 * when left off, with the reason in why (NUL-terminated, at most size bytes): FIPS mode, no
 * default provider, or an OpenSSL call that failed. Left off, enter() does nothing and libssh2
 * uses OpenSSL's own AES-CTR. Call before any SSH session exists (the SSH plugin's init). */
int termhost_batched_ctr_enable(char *why, size_t size);

/* Makes the provider's library context the calling thread's default and returns the previous
 * default, for leave(); NULL (nothing changed) when not enabled. Pairs must nest on one thread. */
void *termhost_batched_ctr_enter(void);

/* Gives the calling thread back the default that enter() returned; NULL does nothing. */
void termhost_batched_ctr_leave(void *previous);

#endif
